package stackemu

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// mapQueues runs each SQS event source mapping as Lambda's poller does:
// batches of up to BatchSize (10 per receive), the function's answer
// deleting what succeeded; what it reports failed, or a whole batch whose
// invocation failed, comes back after the queue's visibility timeout (or
// the visibility the function set), and the queue's redrive policy moves
// it to its dead-letter queue after maxReceiveCount receives.
func (s *Stack) mapQueues(ctx context.Context, o Options, res *resolver) error {
	t := o.Template
	client := sqs.NewFromConfig(o.AWS)
	for _, id := range t.ofType("AWS::Lambda::EventSourceMapping") {
		source, err := res.resolve(t.Resources[id].Properties["EventSourceArn"])
		if err != nil {
			return err
		}
		if !strings.HasPrefix(source, "arn:aws:sqs:") {
			continue
		}
		m, err := s.mapping(t, res, id)
		if err != nil {
			return err
		}
		url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(source[strings.LastIndex(source, ":")+1:])})
		if err != nil {
			return fmt.Errorf("stackemu: mapping %s: %w", id, err)
		}
		s.wg.Go(func() {
			s.pollQueue(ctx, sqs.NewFromConfig(m.fn.aws), aws.ToString(url.QueueUrl), source, o.AWS.Region, m)
		})
	}
	return nil
}

// mapping is an event source mapping's settings.
type mapping struct {
	fn            *function
	batchSize     int
	partial       bool // FunctionResponseTypes has ReportBatchItemFailures
	window        time.Duration
	retries       int
	onFailure     string // destination ARN
	filters       []any
	startPosition string
}

func (s *Stack) mapping(t *Template, res *resolver, id string) (*mapping, error) {
	fnRef, err := res.resolve(t.Resources[id].Properties["FunctionName"])
	if err != nil {
		return nil, err
	}
	fn, err := s.functionByArn(fnRef)
	if err != nil {
		return nil, err
	}
	m := &mapping{fn: fn, batchSize: 10, retries: -1}
	var batch, window float64
	if ok, _ := t.prop(id, "BatchSize", &batch); ok {
		m.batchSize = int(batch)
	}
	if ok, _ := t.prop(id, "MaximumBatchingWindowInSeconds", &window); ok {
		m.window = time.Duration(window) * time.Second
	}
	var retries float64
	if ok, _ := t.prop(id, "MaximumRetryAttempts", &retries); ok {
		m.retries = int(retries)
	}
	var types []string
	_, _ = t.prop(id, "FunctionResponseTypes", &types)
	for _, ty := range types {
		m.partial = m.partial || ty == "ReportBatchItemFailures"
	}
	var dest struct {
		OnFailure struct{ Destination json.RawMessage }
	}
	if ok, _ := t.prop(id, "DestinationConfig", &dest); ok && dest.OnFailure.Destination != nil {
		if m.onFailure, err = res.resolve(dest.OnFailure.Destination); err != nil {
			return nil, err
		}
	}
	var fc struct{ Filters []struct{ Pattern string } }
	_, _ = t.prop(id, "FilterCriteria", &fc)
	for _, f := range fc.Filters {
		var p any
		if err := json.Unmarshal([]byte(f.Pattern), &p); err != nil {
			return nil, fmt.Errorf("stackemu: mapping %s filter: %w", id, err)
		}
		m.filters = append(m.filters, p)
	}
	_, _ = t.prop(id, "StartingPosition", &m.startPosition)
	return m, nil
}

func (s *Stack) pollQueue(ctx context.Context, client *sqs.Client, url, arn, region string, m *mapping) {
	for ctx.Err() == nil {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &url, MaxNumberOfMessages: int32(min(m.batchSize, 10)), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("queue poll failed", "queue", url, "error", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{}
		for _, msg := range out.Messages {
			attrs := map[string]events.SQSMessageAttribute{}
			for k, v := range msg.MessageAttributes {
				attrs[k] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
			}
			ev.Records = append(ev.Records, events.SQSMessage{
				MessageId: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle), Body: aws.ToString(msg.Body),
				Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes, MessageAttributes: attrs,
				EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: region,
			})
		}
		payload, _ := json.Marshal(ev)
		resp, err := m.fn.invoke(ctx, payload)
		if err != nil {
			s.log.Warn("queue batch failed; it returns after the visibility timeout", "function", m.fn.name, "error", err.Error())
			continue
		}
		failed := map[string]bool{}
		if m.partial {
			var r events.SQSEventResponse
			if json.Unmarshal(resp, &r) == nil {
				for _, f := range r.BatchItemFailures {
					failed[f.ItemIdentifier] = true
				}
			}
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for i, msg := range out.Messages {
			if !failed[aws.ToString(msg.MessageId)] {
				del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: msg.ReceiptHandle})
			}
		}
		if len(del) > 0 {
			if _, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: del}); err != nil && ctx.Err() == nil {
				s.log.Warn("delete after a batch failed", "queue", url, "error", err.Error())
			}
		}
	}
}

// schedule invokes each EventBridge rule's Lambda targets at its rate.
func (s *Stack) schedule(ctx context.Context, o Options, res *resolver) error {
	t := o.Template
	for _, id := range t.ofType("AWS::Events::Rule") {
		var expr, state string
		_, _ = t.prop(id, "ScheduleExpression", &expr)
		_, _ = t.prop(id, "State", &state)
		if expr == "" || state == "DISABLED" {
			continue
		}
		every, err := parseRate(expr)
		if err != nil {
			return fmt.Errorf("stackemu: rule %s: %w", id, err)
		}
		if o.ScheduleEvery > 0 {
			every = o.ScheduleEvery
		}
		var targets []struct{ Arn json.RawMessage }
		_, _ = t.prop(id, "Targets", &targets)
		for _, tg := range targets {
			arn, err := res.resolve(tg.Arn)
			if err != nil {
				return err
			}
			fn, err := s.functionByArn(arn)
			if err != nil {
				return err
			}
			ruleArn := fmt.Sprintf("arn:aws:events:%s:123456789012:rule/%s", o.AWS.Region, id)
			s.wg.Go(func() {
				tick := time.NewTicker(every)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case now := <-tick.C:
						ev, _ := json.Marshal(map[string]any{
							"version": "0", "id": requestID(), "detail-type": "Scheduled Event", "source": "aws.events",
							"account": s.account, "time": now.UTC().Format(time.RFC3339), "region": o.AWS.Region,
							"resources": []string{ruleArn}, "detail": map[string]any{},
						})
						if _, err := fn.invoke(ctx, ev); err != nil && ctx.Err() == nil {
							s.log.Warn("scheduled invocation failed", "function", fn.name, "error", err.Error())
						}
					}
				}
			})
		}
	}
	return nil
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

func parseRate(expr string) (time.Duration, error) {
	m := rateExpr.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("schedule %q: only rate() expressions are emulated", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n) * unit, nil
}

// mapStreams runs each DynamoDB stream mapping: the stream is read through
// the emulator's DynamoDB Streams API from the starting position, records
// pass the mapping's filters, batches of up to BatchSize gather for the
// batching window, and a failed batch is retried from its first failed
// record (ReportBatchItemFailures) up to MaximumRetryAttempts times, then
// reported to the on-failure destination and skipped.
func (s *Stack) mapStreams(ctx context.Context, o Options, res *resolver) error {
	t := o.Template
	for _, id := range t.ofType("AWS::Lambda::EventSourceMapping") {
		source, err := res.resolve(t.Resources[id].Properties["EventSourceArn"])
		if err != nil {
			return err
		}
		if !strings.HasPrefix(source, "arn:aws:dynamodb:") {
			continue
		}
		m, err := s.mapping(t, res, id)
		if err != nil {
			return err
		}
		streams := &jsonAPI{cfg: m.fn.aws, service: "dynamodb", prefix: "DynamoDBStreams_20120810."}
		var desc struct {
			StreamDescription struct{ Shards []struct{ ShardId string } }
		}
		if err := streams.call(ctx, "DescribeStream", map[string]any{"StreamArn": source}, &desc); err != nil {
			return fmt.Errorf("stackemu: mapping %s: %w", id, err)
		}
		for _, sh := range desc.StreamDescription.Shards {
			var it struct{ ShardIterator string }
			pos := m.startPosition
			if pos == "" {
				pos = "LATEST"
			}
			if err := streams.call(ctx, "GetShardIterator", map[string]any{"StreamArn": source, "ShardId": sh.ShardId, "ShardIteratorType": pos}, &it); err != nil {
				return fmt.Errorf("stackemu: mapping %s: %w", id, err)
			}
			s.wg.Go(func() { s.pollStream(ctx, streams, source, o.AWS.Region, it.ShardIterator, m) })
		}
	}
	return nil
}

func (s *Stack) pollStream(ctx context.Context, streams *jsonAPI, arn, region, iterator string, m *mapping) {
	var pending []map[string]any
	attempts := 0
	window := max(m.window, 200*time.Millisecond)
	for ctx.Err() == nil && iterator != "" {
		var out struct {
			Records           []map[string]any
			NextShardIterator string
		}
		if err := streams.call(ctx, "GetRecords", map[string]any{"ShardIterator": iterator, "Limit": 1000}, &out); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("stream read failed", "stream", arn, "error", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		iterator = out.NextShardIterator
		for _, r := range out.Records {
			r["eventSourceARN"], r["awsRegion"] = arn, region
			if matchesAny(m.filters, r) {
				pending = append(pending, r)
			}
		}
		for len(pending) > 0 && ctx.Err() == nil {
			batch := pending[:min(len(pending), m.batchSize)]
			payload, _ := json.Marshal(map[string]any{"Records": batch})
			resp, err := m.fn.invoke(ctx, payload)
			failedAt := -1
			if err != nil {
				failedAt = 0
				s.log.Warn("stream batch failed", "function", m.fn.name, "error", err.Error())
			} else if m.partial {
				var r events.DynamoDBEventResponse
				if json.Unmarshal(resp, &r) == nil && len(r.BatchItemFailures) > 0 {
					failedAt = 0
					for i, rec := range batch {
						if seq, _ := rec["dynamodb"].(map[string]any)["SequenceNumber"].(string); seq == r.BatchItemFailures[0].ItemIdentifier {
							failedAt = i
						}
					}
				}
			}
			if failedAt < 0 {
				pending, attempts = pending[len(batch):], 0
				continue
			}
			pending = pending[failedAt:]
			attempts++
			if m.retries >= 0 && attempts > m.retries {
				s.streamFailure(ctx, streams.cfg, arn, m, pending[:min(len(pending), m.batchSize)])
				pending, attempts = pending[min(len(pending), m.batchSize):], 0
				continue
			}
			sleep(ctx, time.Second)
		}
		sleep(ctx, window)
	}
}

// streamFailure sends the on-failure destination what Lambda does: where
// the discarded batch was in the stream, not its records.
func (s *Stack) streamFailure(ctx context.Context, cfg aws.Config, arn string, m *mapping, batch []map[string]any) {
	if m.onFailure == "" || len(batch) == 0 {
		return
	}
	seq := func(r map[string]any) any { return r["dynamodb"].(map[string]any)["SequenceNumber"] }
	body, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted", "functionArn": m.fn.fn.Name(), "approximateInvokeCount": m.retries + 1},
		"DDBStreamBatchInfo": map[string]any{
			"streamArn": arn, "batchSize": len(batch), "startSequenceNumber": seq(batch[0]), "endSequenceNumber": seq(batch[len(batch)-1]),
		},
	})
	s.sendTo(ctx, cfg, m.onFailure, string(body))
}

// sendTo sends a message to the queue an ARN names.
func (s *Stack) sendTo(ctx context.Context, cfg aws.Config, arn, body string) {
	client := sqs.NewFromConfig(cfg)
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(arn[strings.LastIndex(arn, ":")+1:])})
	if err == nil {
		_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: &body})
	}
	if err != nil && ctx.Err() == nil {
		s.log.Error("on-failure destination unreachable", "destination", arn, "error", err.Error())
	}
}

// matchesAny applies Lambda's event filtering: no filters pass every
// record, otherwise one matching pattern does.
func matchesAny(filters []any, rec map[string]any) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if matchPattern(f, rec) {
			return true
		}
	}
	return false
}

// matchPattern supports the filter rules the templates use: nested
// objects, lists of literal values, and {"prefix": ...} and {"exists": ...}.
func matchPattern(pattern, value any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		v, ok := value.(map[string]any)
		if !ok {
			return false
		}
		for k, sub := range p {
			if rules, isList := sub.([]any); isList {
				field, present := v[k]
				if !matchRules(rules, field, present) {
					return false
				}
				continue
			}
			if !matchPattern(sub, v[k]) {
				return false
			}
		}
		return true
	}
	return false
}

func matchRules(rules []any, field any, present bool) bool {
	for _, rule := range rules {
		switch r := rule.(type) {
		case map[string]any:
			if prefix, ok := r["prefix"].(string); ok {
				if s, isStr := field.(string); isStr && strings.HasPrefix(s, prefix) {
					return true
				}
			}
			if exists, ok := r["exists"].(bool); ok && exists == present {
				return true
			}
		default:
			if present && fmt.Sprint(r) == fmt.Sprint(field) {
				return true
			}
		}
	}
	return false
}

// jsonAPI calls an AWS JSON protocol API of the emulator, signed, and
// hands its answer back raw: a DynamoDB stream record is already the shape
// Lambda's event carries, which the SDK's typed records would lose.
type jsonAPI struct {
	cfg     aws.Config
	service string
	prefix  string
}

func (j *jsonAPI) call(ctx context.Context, op string, in, out any) error {
	body, _ := json.Marshal(in)
	endpoint := aws.ToString(j.cfg.BaseEndpoint)
	if endpoint == "" {
		return fmt.Errorf("stackemu: no emulator endpoint (AWS_ENDPOINT_URL) for %s", op)
	}
	target := j.prefix + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target)
	creds, err := j.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), j.service, j.cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stackemu: %s: %s: %s", target, resp.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// subscribedLogGroups are the log groups a subscription filter reads.
func subscribedLogGroups(t *Template) map[string]bool {
	out := map[string]bool{}
	for _, id := range t.ofType("AWS::Logs::SubscriptionFilter") {
		var group map[string]string
		_, _ = t.prop(id, "LogGroupName", &group)
		out[group["Ref"]] = true
	}
	return out
}

// jsonFilter is the one filter pattern form emulated: { $.field = value }.
var jsonFilter = regexp.MustCompile(`^\{\s*\$\.([A-Za-z0-9_]+)\s*=\s*("[^"]*"|[0-9.]+)\s*\}$`)

// subscription is one log subscription filter with its destination.
type subscription struct {
	name        string
	logGroup    string
	field       string
	value       any
	destination *function
	retries     int
	onFailure   string
}

// subscribeLogs delivers each subscribed function's matching log lines to
// the filter's destination function, as CloudWatch Logs does: gzipped,
// base64 batches, invoked asynchronously (Lambda's retries, then the
// destination's on-failure queue, as its EventInvokeConfig says).
func (s *Stack) subscribeLogs(ctx context.Context, t *Template, res *resolver) error {
	byGroup := map[string][]*subscription{}
	for _, id := range t.ofType("AWS::Logs::SubscriptionFilter") {
		var group map[string]string
		var pattern, name string
		_, _ = t.prop(id, "LogGroupName", &group)
		_, _ = t.prop(id, "FilterPattern", &pattern)
		_, _ = t.prop(id, "FilterName", &name)
		m := jsonFilter.FindStringSubmatch(pattern)
		if m == nil {
			return fmt.Errorf("stackemu: subscription %s: filter pattern %q is not emulated", id, pattern)
		}
		var value any
		_ = json.Unmarshal([]byte(m[2]), &value)
		dest, err := res.resolve(t.Resources[id].Properties["DestinationArn"])
		if err != nil {
			return err
		}
		fn, err := s.functionByArn(dest)
		if err != nil {
			return err
		}
		sub := &subscription{name: name, logGroup: "/aws/lambda/" + group["Ref"], field: m[1], value: value, destination: fn, retries: 2}
		for _, cfgID := range t.ofType("AWS::Lambda::EventInvokeConfig") {
			target, err := res.resolve(t.Resources[cfgID].Properties["FunctionName"])
			if err != nil || target != fn.fn.Name() {
				continue
			}
			var r float64
			if ok, _ := t.prop(cfgID, "MaximumRetryAttempts", &r); ok {
				sub.retries = int(r)
			}
			var dc struct {
				OnFailure struct{ Destination json.RawMessage }
			}
			if ok, _ := t.prop(cfgID, "DestinationConfig", &dc); ok && dc.OnFailure.Destination != nil {
				if sub.onFailure, err = res.resolve(dc.OnFailure.Destination); err != nil {
					return err
				}
			}
		}
		byGroup[group["Ref"]] = append(byGroup[group["Ref"]], sub)
	}
	for _, f := range s.functions {
		var lg struct{ LogGroup map[string]string }
		_, _ = t.prop(f.id, "LoggingConfig", &lg)
		subs := byGroup[lg.LogGroup["Ref"]]
		if len(subs) == 0 || f.lines == nil {
			continue
		}
		s.wg.Go(func() { s.shipLogs(ctx, f, subs) })
	}
	return nil
}

// shipLogs batches a function's matching lines for about a second, as
// CloudWatch Logs delivers, and invokes each destination.
func (s *Stack) shipLogs(ctx context.Context, f *function, subs []*subscription) {
	batches := make([][]events.CloudwatchLogsLogEvent, len(subs))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	seq := 0
	for {
		select {
		case <-ctx.Done():
			return
		case line := <-f.lines:
			var doc map[string]any
			if json.Unmarshal([]byte(line), &doc) != nil {
				continue
			}
			for i, sub := range subs {
				if fmt.Sprint(doc[sub.field]) == fmt.Sprint(sub.value) {
					seq++
					batches[i] = append(batches[i], events.CloudwatchLogsLogEvent{ID: strconv.Itoa(seq), Timestamp: time.Now().UnixMilli(), Message: line})
				}
			}
		case <-tick.C:
			for i, sub := range subs {
				if len(batches[i]) > 0 {
					s.deliverLogs(ctx, f, sub, batches[i])
					batches[i] = nil
				}
			}
		}
	}
}

func (s *Stack) deliverLogs(ctx context.Context, f *function, sub *subscription, batch []events.CloudwatchLogsLogEvent) {
	data, _ := json.Marshal(events.CloudwatchLogsData{
		Owner: s.account, LogGroup: sub.logGroup, LogStream: "$LATEST", SubscriptionFilters: []string{sub.name},
		MessageType: "DATA_MESSAGE", LogEvents: batch,
	})
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(data)
	_ = zw.Close()
	payload, _ := json.Marshal(events.CloudwatchLogsEvent{AWSLogs: events.CloudwatchLogsRawData{Data: base64.StdEncoding.EncodeToString(zipped.Bytes())}})
	var err error
	for attempt := 0; attempt <= sub.retries; attempt++ {
		if _, err = sub.destination.invoke(ctx, payload); err == nil || ctx.Err() != nil {
			return
		}
		s.log.Warn("log delivery failed", "from", f.name, "to", sub.destination.name, "attempt", attempt+1, "error", err.Error())
	}
	if sub.onFailure != "" {
		body, _ := json.Marshal(map[string]any{"requestContext": map[string]any{"condition": "RetriesExhausted", "functionArn": sub.destination.fn.Name()}, "responsePayload": err.Error()})
		s.sendTo(ctx, sub.destination.aws, sub.onFailure, string(body))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
