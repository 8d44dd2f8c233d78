package connections_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/connections"
)

func resolveOne(e env, projectID, id string) (connections.Credential, error) {
	got, err := e.repo.Resolve(ctx, acct, projectID, "core-research", map[string]string{"vendor": id})
	return got["vendor"], err
}

func TestRotationKeepsThePreviousVersionFor24HoursThenItIsGone(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		e.clock.Advance(time.Hour)
		rotated, events, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-second-0123456789"}`)})
		if err != nil || !slices.Equal(events, []string{connections.EventRotated}) {
			t.Fatalf("rotate: %v %v", events, err)
		}
		if rotated.CredentialVersion != 2 || rotated.RotatedAt == nil || !rotated.RotatedAt.Equal(e.clock.Now()) || rotated.CredentialHint != "6789" {
			t.Fatalf("rotated record %+v", rotated)
		}
		if cred, err := resolveOne(e, prj, c.ID); err != nil || cred.Secret != "tok-second-0123456789" || cred.Version != 2 {
			t.Fatalf("resolve after rotation: %v %v", cred, err)
		}
		e.clock.Advance(connections.PreviousVersionTTL - time.Second)
		if cred, err := e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 1); err != nil || cred.Secret != "tok-first-0123456789" {
			t.Fatalf("previous version within 24 h: %v %v", cred, err)
		}
		e.clock.Advance(time.Second)
		_, err = e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 1)
		wantCode(t, err, apierr.NotFound)
		if cred, err := e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 2); err != nil || cred.Secret != "tok-second-0123456789" {
			t.Fatalf("current version: %v %v", cred, err)
		}
	})
}

func TestASecondRotationDestroysTheVersionBeforeThePrevious(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		for _, tok := range []string{"tok-second-0123456789", "tok-third-0123456789"} {
			if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"` + tok + `"}`)}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 1)
		wantCode(t, err, apierr.NotFound)
		if cred, err := e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 2); err != nil || cred.Secret != "tok-second-0123456789" {
			t.Fatalf("previous: %v %v", cred, err)
		}
		if n := countVersions(t, e, c.ID); n != 2 {
			t.Fatalf("%d sealed versions stored, want 2", n)
		}
	})
}

func countVersions(t *testing.T, e env, id string) int {
	t.Helper()
	page, err := e.st.Query(ctx, store.Query{PK: "acct#" + acct, Prefix: "conv#" + id + "#"})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

func TestDeleteDestroysEveryVersionInOneWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		if _, _, err := e.repo.Update(ctx, acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-second-0123456789"}`)}); err != nil {
			t.Fatal(err)
		}
		before := e.st.writes.Load()
		deleted, err := e.repo.Delete(ctx, acct, prj, c.ID)
		if err != nil || deleted.ID != c.ID {
			t.Fatal(deleted, err)
		}
		if e.st.writes.Load() != before+1 {
			t.Fatalf("delete made %d writes", e.st.writes.Load()-before)
		}
		if n := countVersions(t, e, c.ID); n != 0 {
			t.Fatalf("%d sealed versions survive the delete", n)
		}
		_, err = e.repo.Get(ctx, acct, prj, c.ID)
		wantCode(t, err, apierr.NotFound)
		_, err = resolveOne(e, prj, c.ID)
		wantCode(t, err, apierr.NotFound)
		_, err = e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, 1)
		wantCode(t, err, apierr.NotFound)
		_, err = e.repo.Delete(ctx, acct, prj, c.ID)
		wantCode(t, err, apierr.NotFound)
	})
}

func TestUpdateDisablesEnablesAndRelabelsWithTheirEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		for _, step := range []struct {
			req    connections.UpdateRequest
			events []string
			check  func(*connections.Connection) bool
		}{
			{connections.UpdateRequest{Status: ptr("disabled")}, []string{connections.EventDisabled},
				func(c *connections.Connection) bool { return c.Status == "disabled" && c.DisabledAt != nil }},
			{connections.UpdateRequest{Status: ptr("disabled")}, nil,
				func(c *connections.Connection) bool { return c.Status == "disabled" }},
			{connections.UpdateRequest{Label: ptr("renamed")}, nil,
				func(c *connections.Connection) bool { return c.Label == "renamed" && c.CredentialVersion == 1 }},
			{connections.UpdateRequest{Status: ptr("active"), Credentials: json.RawMessage(`{"token":"tok-second-0123456789"}`)},
				[]string{connections.EventRotated, connections.EventEnabled},
				func(c *connections.Connection) bool {
					return c.Status == "active" && c.DisabledAt == nil && c.CredentialVersion == 2
				}},
		} {
			before := e.st.writes.Load()
			got, events, err := e.repo.Update(ctx, acct, prj, c.ID, step.req)
			if err != nil || !slices.Equal(events, step.events) || !step.check(got) {
				t.Fatalf("%+v: got %+v %v %v", step.req, got, events, err)
			}
			if e.st.writes.Load() != before+1 {
				t.Fatalf("update made %d writes", e.st.writes.Load()-before)
			}
			if read, _ := e.repo.Get(ctx, acct, prj, c.ID); !step.check(read) {
				t.Fatalf("stored %+v", read)
			}
		}
	})
}

func TestConcurrentUpdatesAreNeverLost(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		const rotations = 3
		reqs := []connections.UpdateRequest{{Label: ptr("renamed")}, {Status: ptr("disabled")}}
		for i := range rotations {
			reqs = append(reqs, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-concurrent-0123456789-` + string(rune('a'+i)) + `"}`)})
		}
		var wg sync.WaitGroup
		errs := make([]error, len(reqs))
		for i, req := range reqs {
			wg.Go(func() { _, _, errs[i] = e.repo.Update(ctx, acct, prj, c.ID, req) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			wantCode(t, err, apierr.Conflict) // gave up after retries: said so, wrote nothing
		}
		got, err := e.repo.Get(ctx, acct, prj, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		rotated := 0
		for _, err := range errs[2:] {
			if err == nil {
				rotated++
			}
		}
		if got.CredentialVersion != int64(1+rotated) {
			t.Fatalf("version %d after %d successful rotations", got.CredentialVersion, rotated)
		}
		if (errs[0] == nil) != (got.Label == "renamed") || (errs[1] == nil) != (got.Status == "disabled") {
			t.Fatalf("a successful change was lost: %+v, errors %v", got, errs)
		}
		if ok == 0 {
			t.Fatal("no update succeeded")
		}
		if _, err := e.repo.ResolveVersion(ctx, acct, prj, "core-research", c.ID, got.CredentialVersion); err != nil && got.Status == "active" {
			t.Fatalf("the current version does not open: %v", err)
		}
	})
}

func TestAnotherAccountOrProjectSeesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := create(t, e, prj, bearer("tok-first-0123456789"))
		accountLevel := create(t, e, "", bearer("tok-account-0123456789"))
		for _, scope := range []struct{ account, project string }{{"acct_2", prj}, {acct, other}, {acct, ""}} {
			_, err := e.repo.Get(ctx, scope.account, scope.project, c.ID)
			wantCode(t, err, apierr.NotFound)
			_, _, err = e.repo.Update(ctx, scope.account, scope.project, c.ID, connections.UpdateRequest{Status: ptr("disabled")})
			wantCode(t, err, apierr.NotFound)
			_, err = e.repo.Delete(ctx, scope.account, scope.project, c.ID)
			wantCode(t, err, apierr.NotFound)
			_, err = e.repo.Resolve(ctx, scope.account, scope.project, "core-research", map[string]string{"v": c.ID})
			wantCode(t, err, apierr.NotFound)
			_, err = e.repo.ResolveVersion(ctx, scope.account, scope.project, "core-research", c.ID, 1)
			wantCode(t, err, apierr.NotFound)
			list, _, err := e.repo.List(ctx, scope.account, scope.project, 100, "")
			if err != nil || slices.ContainsFunc(list, func(x *connections.Connection) bool { return x.ID == c.ID }) {
				t.Fatalf("%+v lists it: %v", scope, err)
			}
		}
		_, err := e.repo.Get(ctx, acct, prj, accountLevel.ID)
		wantCode(t, err, apierr.NotFound)
		if got, err := e.repo.Get(ctx, acct, "", accountLevel.ID); err != nil || got.ProjectID != nil {
			t.Fatalf("account-level: %+v %v", got, err)
		}
		if got, err := e.repo.Get(ctx, acct, prj, c.ID); err != nil || got.Status != "active" {
			t.Fatalf("the other scopes changed it: %+v %v", got, err)
		}
	})
}

func TestListIsNewestFirstAndPaged(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var made []string
		for range 5 {
			made = append(made, create(t, e, prj, bearer("tok-0123456789-abcd")).ID)
			e.clock.Advance(time.Millisecond)
		}
		slices.Reverse(made)
		var got []string
		cursor := ""
		for page := 0; ; page++ {
			list, next, err := e.repo.List(ctx, acct, prj, 2, cursor)
			if err != nil || page > 3 {
				t.Fatal(err, page)
			}
			for _, c := range list {
				got = append(got, c.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(got, made) {
			t.Fatalf("listed %v, want %v", got, made)
		}
		for _, limit := range []int{0, 101} {
			_, _, err := e.repo.List(ctx, acct, prj, limit, "")
			wantCode(t, err, apierr.ValidationFailed)
		}
		_, _, err := e.repo.List(ctx, acct, prj, 10, "not a cursor!")
		wantCode(t, err, apierr.ValidationFailed)
	})
}

func TestCreateUpdateDeleteCommitWithAnIdempotentResponse(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		idem := idempotency.New(e.st.Store, nil, e.clock.Now, time.Minute)
		deferred := connections.NewRepo(idempotency.Deferring(e.st.Store), e.sealer, e.clock.Now)
		commit := func(key string, do func(u *idempotency.Unit) error) {
			t.Helper()
			claim, _, err := idem.Claim(ctx, "key_1", key, key)
			if err != nil {
				t.Fatal(err)
			}
			u := &idempotency.Unit{}
			if err := do(u); err != nil {
				t.Fatal(err)
			}
			if u.Len() == 0 {
				t.Fatal("nothing was deferred")
			}
			if err := idem.CompleteUnit(ctx, claim, idempotency.Response{Status: 200}, u); err != nil {
				t.Fatal(err)
			}
		}
		var c *connections.Connection
		commit("k-00000001", func(u *idempotency.Unit) (err error) {
			c, err = deferred.Create(idempotency.WithUnit(ctx, u), acct, prj, bearer("tok-first-0123456789"))
			if err == nil {
				if _, gerr := e.repo.Get(ctx, acct, prj, c.ID); gerr == nil {
					t.Fatal("the create was applied before the commit")
				}
			}
			return err
		})
		commit("k-00000002", func(u *idempotency.Unit) error {
			_, _, err := deferred.Update(idempotency.WithUnit(ctx, u), acct, prj, c.ID, connections.UpdateRequest{Credentials: json.RawMessage(`{"token":"tok-second-0123456789"}`)})
			return err
		})
		if cred, err := resolveOne(e, prj, c.ID); err != nil || cred.Secret != "tok-second-0123456789" {
			t.Fatalf("after the committed rotation: %v %v", cred, err)
		}
		commit("k-00000003", func(u *idempotency.Unit) error {
			_, err := deferred.Delete(idempotency.WithUnit(ctx, u), acct, prj, c.ID)
			return err
		})
		if n := countVersions(t, e, c.ID); n != 0 {
			t.Fatalf("%d versions after the committed delete", n)
		}
	})
}
