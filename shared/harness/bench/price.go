package bench

import (
	"math"
	"time"
)

// Prices are the list prices one request's bill is made of. They live in the
// source, dated, because a cost figure is only as true as its prices: when
// AWS changes one, change it here and the next run says so.
type Prices struct {
	Date   string // when these prices were recorded
	Region string
	// APIGatewayPerMillion is the HTTP API's price per million requests
	// (first 300 million a month; each 512 KB of a request counts as one).
	APIGatewayPerMillion float64
	// LambdaPerMillion is Lambda's per-request charge (the same on arm64).
	LambdaPerMillion float64
	// LambdaArmPerGBSecond is Lambda arm64 duration (first 7.5 billion GB-s
	// a month), billed per 1 ms.
	LambdaArmPerGBSecond float64
	// LambdaMemoryMB is what the credits group declares for its function
	// (creditsapi.Deploy), which serves the measured read. It is copied rather
	// than imported: the infra module pulls in CDK and jsii.
	LambdaMemoryMB int
	// DynamoDB on-demand, standard table class: a read request unit is one
	// strongly consistent read of up to 4 KB, a write request unit one write
	// of up to 1 KB; transactional reads and writes take two.
	DynamoDBPerMillionRRU float64
	DynamoDBPerMillionWRU float64
	// CloudWatchLogsPerGB is the ingestion of log data (standard class):
	// the audit event each request adds to its access line (audit.Fold).
	CloudWatchLogsPerGB float64
}

// USEast1 are the us-east-1 list prices as published by AWS when they were
// recorded; DynamoDB's are those of the on-demand price cut of 2024-11-01.
var USEast1 = Prices{
	Date:                  "2026-11-22",
	Region:                "us-east-1",
	APIGatewayPerMillion:  1.00,
	LambdaPerMillion:      0.20,
	LambdaArmPerGBSecond:  0.0000133334,
	LambdaMemoryMB:        256, // creditsapi.Deploy: Name "credits"
	DynamoDBPerMillionRRU: 0.125,
	DynamoDBPerMillionWRU: 0.625,
	CloudWatchLogsPerGB:   0.50,
}

// Usage is what one request consumes of the priced resources.
type Usage struct {
	ReadUnits  float64       // DynamoDB read request units
	WriteUnits float64       // DynamoDB write request units
	Duration   time.Duration // Lambda billed duration before rounding
	LogBytes   float64       // log data ingested beyond the request's own line
}

// Cost is the price of a million requests, in US dollars, by line item.
type Cost struct {
	APIGateway     float64 `json:"apiGateway"`
	LambdaRequests float64 `json:"lambdaRequests"`
	LambdaDuration float64 `json:"lambdaDuration"`
	DynamoDBReads  float64 `json:"dynamoDBReads"`
	DynamoDBWrites float64 `json:"dynamoDBWrites"`
	CloudWatchLogs float64 `json:"cloudWatchLogs"`
}

// PerMillion prices a million requests that each use u. Lambda rounds each
// invocation's duration up to the next millisecond.
func (p Prices) PerMillion(u Usage) Cost {
	billedSeconds := math.Ceil(float64(u.Duration)/float64(time.Millisecond)) / 1000
	gbSeconds := float64(p.LambdaMemoryMB) / 1024 * billedSeconds
	return Cost{
		APIGateway:     p.APIGatewayPerMillion,
		LambdaRequests: p.LambdaPerMillion,
		LambdaDuration: gbSeconds * p.LambdaArmPerGBSecond * 1e6,
		DynamoDBReads:  u.ReadUnits * p.DynamoDBPerMillionRRU,
		DynamoDBWrites: u.WriteUnits * p.DynamoDBPerMillionWRU,
		CloudWatchLogs: u.LogBytes * 1e6 / (1 << 30) * p.CloudWatchLogsPerGB,
	}
}

// Total is the whole bill of a million requests.
func (c Cost) Total() float64 {
	return c.APIGateway + c.LambdaRequests + c.LambdaDuration + c.DynamoDBReads + c.DynamoDBWrites + c.CloudWatchLogs
}

// Lines lists the line items in a fixed order, for the table.
func (c Cost) Lines() []CostLine {
	return []CostLine{
		{"API Gateway HTTP API requests", c.APIGateway},
		{"Lambda requests", c.LambdaRequests},
		{"Lambda duration (arm64 GB-s)", c.LambdaDuration},
		{"DynamoDB read request units", c.DynamoDBReads},
		{"DynamoDB write request units", c.DynamoDBWrites},
		{"CloudWatch Logs ingestion (audit on the access line)", c.CloudWatchLogs},
	}
}

// CostLine is one line item of a Cost.
type CostLine struct {
	Name string
	USD  float64
}

// Dominant is the largest line item: where a saving would count most.
func (c Cost) Dominant() CostLine {
	var top CostLine
	for _, l := range c.Lines() {
		if l.USD > top.USD {
			top = l
		}
	}
	return top
}
