package queuetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/queue"
)

var rules = []rule{
	{"SentMessageIsDeliveredOnceWithItsBody", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text(`{"event":"x","n":1}`)...)
		m := receiveOne(t, q, 30*time.Second)
		if string(m.Body) != `{"event":"x","n":1}` || m.Attempts != 1 || m.ID == "" || m.Receipt == "" {
			t.Fatalf("received %+v", m)
		}
	}},
	{"BatchOfTenIsDeliveredWhole", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text(names(10)...)...)
		got := drain(t, q, 10)
		if !slices.Equal(bodies(got), names(10)) {
			t.Fatalf("bodies = %v", bodies(got))
		}
	}},
	{"SendRefusesMoreThanTenOrNone", func(t *testing.T, q, dlq queue.Queue) {
		if err := q.Send(ctx(t), text(names(11)...)...); err == nil {
			t.Fatal("sending 11 messages succeeded")
		}
		if err := q.Send(ctx(t)); err == nil {
			t.Fatal("sending no message succeeded")
		}
		wantNone(t, q, 0)
	}},
	{"BodyMustBeText", func(t *testing.T, q, dlq queue.Queue) {
		for _, body := range [][]byte{{0xff, 0xfe}, []byte("nul\x00inside")} {
			if err := q.Send(ctx(t), queue.Message{Body: body}); err == nil {
				t.Fatalf("sending %q succeeded", body)
			}
		}
		send(t, q, text("tabs\tand\nnewlines ünïcode ✓")...)
		if m := receiveOne(t, q, time.Minute); string(m.Body) != "tabs\tand\nnewlines ünïcode ✓" {
			t.Fatalf("body = %q", m.Body)
		}
	}},
	{"ReceiveOnAnEmptyQueueWaitsThenReturnsNothing", func(t *testing.T, q, dlq queue.Queue) {
		start := time.Now()
		wantNone(t, q, time.Second)
		if waited := time.Since(start); waited < 900*time.Millisecond {
			t.Fatalf("returned after %v; want about 1s", waited)
		}
	}},
	{"ReceiveWakesForAMessageSentWhileWaiting", func(t *testing.T, q, dlq queue.Queue) {
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = q.Send(ctx(t), text("late")...)
		}()
		start := time.Now()
		m := receiveOne(t, q, time.Minute)
		if string(m.Body) != "late" || time.Since(start) > 8*time.Second {
			t.Fatalf("received %q after %v", m.Body, time.Since(start))
		}
	}},
	{"ReceivedMessageIsHiddenUntilItsVisibilityLapses", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		first := receiveOne(t, q, 2*time.Second)
		wantNone(t, q, time.Second)
		again := receiveOne(t, q, time.Minute)
		if again.ID != first.ID || again.Attempts != 2 || again.Receipt == first.Receipt {
			t.Fatalf("redelivery %+v after %+v", again, first)
		}
	}},
	{"DeletedMessageIsNeverRedelivered", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		m := receiveOne(t, q, time.Second)
		if err := q.Delete(ctx(t), m.Receipt); err != nil {
			t.Fatal(err)
		}
		wantNone(t, q, 2*time.Second)
	}},
	{"DeletingTwiceSucceeds", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		m := receiveOne(t, q, time.Minute)
		for range 2 {
			if err := q.Delete(ctx(t), m.Receipt); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"ForgedReceiptIsInvalid", func(t *testing.T, q, dlq queue.Queue) {
		wantInvalidReceipt(t, q.Delete(ctx(t), "forged"))
		wantInvalidReceipt(t, q.ChangeVisibility(ctx(t), "forged", time.Second))
	}},
	{"ChangeVisibilityOfADeletedMessageIsInvalid", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		m := receiveOne(t, q, time.Minute)
		if err := q.Delete(ctx(t), m.Receipt); err != nil {
			t.Fatal(err)
		}
		wantInvalidReceipt(t, q.ChangeVisibility(ctx(t), m.Receipt, time.Second))
	}},
	{"ChangeVisibilityToZeroRedeliversAtOnce", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		m := receiveOne(t, q, time.Hour)
		if err := q.ChangeVisibility(ctx(t), m.Receipt, 0); err != nil {
			t.Fatal(err)
		}
		if again := receiveOne(t, q, time.Minute); again.ID != m.ID || again.Attempts != 2 {
			t.Fatalf("redelivery %+v", again)
		}
	}},
	{"ChangeVisibilityExtendsTheHiding", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("x")...)
		m := receiveOne(t, q, time.Second)
		if err := q.ChangeVisibility(ctx(t), m.Receipt, time.Minute); err != nil {
			t.Fatal(err)
		}
		wantNone(t, q, 2*time.Second)
	}},
	{"DelayedMessageIsHiddenUntilItsDelay", func(t *testing.T, q, dlq queue.Queue) {
		start := time.Now()
		send(t, q, queue.Message{Body: []byte("later"), Delay: 2 * time.Second}, queue.Message{Body: []byte("now")})
		if m := receiveOne(t, q, time.Minute); string(m.Body) != "now" {
			t.Fatalf("first delivery %q; want now", m.Body)
		}
		m := receiveOne(t, q, time.Minute)
		if string(m.Body) != "later" || time.Since(start) < 1500*time.Millisecond {
			t.Fatalf("delayed message %q after %v", m.Body, time.Since(start))
		}
	}},
	{"MessageMovesToTheDeadLetterQueueAfterMaxReceives", func(t *testing.T, q, dlq queue.Queue) {
		send(t, q, text("poison")...)
		for i := 1; i <= maxReceives; i++ {
			m := receiveOne(t, q, time.Second)
			if m.Attempts != i {
				t.Fatalf("attempt %d reported as %d", i, m.Attempts)
			}
		}
		wantNone(t, q, 2*time.Second)
		m := receiveOne(t, dlq, time.Minute)
		if !strings.Contains(string(m.Body), "poison") {
			t.Fatalf("dead letter %q", m.Body)
		}
	}},
}

// survivesARestart: what was sent and not deleted before the process
// stopped is delivered after it starts again, in flight or not, with its
// receive count kept; what was deleted stays deleted.
func survivesARestart(t *testing.T, open func() (q, dlq queue.Queue, stop func())) {
	q, _, stop := open()
	send(t, q, text("done", "in-flight", "waiting")...)
	send(t, q, queue.Message{Body: []byte("delayed"), Delay: 3 * time.Second})
	var inFlight queue.Received
	for _, m := range drain(t, q, 3) {
		switch string(m.Body) {
		case "done":
			if err := q.Delete(ctx(t), m.Receipt); err != nil {
				t.Fatal(err)
			}
		case "in-flight":
			inFlight = m
		case "waiting":
			if err := q.ChangeVisibility(ctx(t), m.Receipt, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if inFlight.ID == "" {
		t.Fatal("the in-flight message was not among the first three")
	}
	if err := q.ChangeVisibility(ctx(t), inFlight.Receipt, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	stop()
	q, _, stop = open()
	defer stop()
	got := drain(t, q, 3)
	if want := []string{"delayed", "in-flight", "waiting"}; !slices.Equal(bodies(got), want) {
		t.Fatalf("after the restart received %v; want %v", bodies(got), want)
	}
	for _, m := range got {
		if string(m.Body) == "in-flight" && (m.ID != inFlight.ID || m.Attempts != 2) {
			t.Fatalf("in-flight message redelivered as %+v; want id %s, attempt 2", m, inFlight.ID)
		}
	}
	wantNone(t, q, time.Second)
}
