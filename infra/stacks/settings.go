package stacks

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
)

// Settings are the choices an operator makes per deployment. They come from
// CDK context (`cdk deploy -c stage=prod`) or the environment, never from the
// code, so one template can serve many accounts, regions and stages.
type Settings struct {
	// Stage names the deployment; it prefixes the stack name so several
	// stages can live in one account, and reaches the functions as STAGE.
	Stage    string
	LogLevel string
	// LogRetentionDays is kept as a number so tests and docs speak in days;
	// only the values CloudWatch Logs accepts pass LoadSettings.
	LogRetentionDays int
	// Retain keeps the table, buckets, key and secret when the stack is
	// deleted. It defaults to true because losing account data to a typo in
	// `cdk destroy` is worse than cleaning up by hand.
	Retain bool
	// AlarmTopicARN, when set, receives every alarm. It names an existing
	// topic so the stack creates no topic that nobody subscribes to.
	AlarmTopicARN string
	// AssetDir holds <function>/bootstrap as `make build` writes it.
	AssetDir string
	X402     X402Settings
	// RPCURLs is the JSON-RPC endpoint of each chain managed wallets and
	// swaps reach, by chain id; the functions get it as RPC_URL_<id>. A
	// chain not listed answers 503.
	RPCURLs map[uint64]string
	LiFi    LiFiSettings
}

// LiFiSettings configure the swap router (a LI.FI-compatible API).
type LiFiSettings struct {
	BaseURL string
	// APIKey is optional (LI.FI rate-limits keyless callers harder). It
	// reaches the function as a plain environment variable, visible to
	// whoever may read the function's configuration; see README.md.
	APIKey string
}

// X402Settings configure credit top-ups. PayTo has no safe default: with it
// empty the credits function answers top-ups with 503 until an operator sets
// it, instead of sending payments to an address nobody controls.
type X402Settings struct {
	Network        string
	Asset          string
	PayTo          string
	FacilitatorURL string
	// RPCURL is a JSON-RPC endpoint of Network, to reconcile a settlement
	// whose answer was lost; empty leaves such payments waiting.
	RPCURL string
}

// setting is one knob: its context key, its environment variable and its
// default. Context wins over the environment because `-c` is the explicit,
// per-command choice; the environment suits CI and LocalStack shells.
type setting struct {
	Context string
	Env     string
	Default string
	Doc     string
}

// SettingsTable lists every knob in one place; README.md documents the same
// table and a test keeps the two in step.
var SettingsTable = []setting{
	{"stage", "STAGE", "dev", "deployment name; stack `PlatformApi-<stage>`"},
	{"logLevel", "LOG_LEVEL", "info", "functions' slog level: debug, info, warn, error"},
	{"logRetentionDays", "LOG_RETENTION_DAYS", "30", "CloudWatch Logs retention of every function's log group"},
	{"retain", "RETAIN", "true", "keep table, buckets, KMS key and secret on stack deletion"},
	{"alarmTopicArn", "ALARM_TOPIC_ARN", "", "existing SNS topic that receives every alarm (none when empty)"},
	{"assetDir", "ASSET_DIR", "build", "directory holding `<function>/bootstrap` from `make build`"},
	{"x402Network", "X402_NETWORK", "eip155:84532", "x402 network (CAIP-2); Base Sepolia by default"},
	{"x402Asset", "X402_ASSET", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "x402 asset: USDC on Base Sepolia by default"},
	{"x402PayTo", "X402_PAY_TO", "", "address that receives top-up payments; empty disables top-ups (503)"},
	{"x402FacilitatorUrl", "X402_FACILITATOR_URL", "https://x402.org/facilitator", "x402 facilitator that verifies and settles payments"},
	{"x402RpcUrl", "X402_RPC_URL", "", "JSON-RPC endpoint of the x402 network, to reconcile a settlement whose answer was lost (none when empty)"},
	{"rpcUrls", "RPC_URLS", "", "chains of managed wallets and swaps: `<chainId>=<url>` pairs, comma-separated; each becomes RPC_URL_<chainId>"},
	{"lifiBaseUrl", "LIFI_BASE_URL", "https://li.quest/v1", "LI.FI-compatible API that quotes and routes swaps"},
	{"lifiApiKey", "LIFI_API_KEY", "", "LI.FI API key (optional; higher rate limits)"},
}

var (
	stagePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,31}$`)
	logLevels    = map[string]bool{"debug": true, "info": true, "warn": true, "error": true}
)

// retentionDays maps the retention periods CloudWatch Logs accepts to CDK's
// enum; any other number would fail only at deploy time, so it fails here.
var retentionDays = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS,
	5: awslogs.RetentionDays_FIVE_DAYS, 7: awslogs.RetentionDays_ONE_WEEK,
	14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
	60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS,
	120: awslogs.RetentionDays_FOUR_MONTHS, 150: awslogs.RetentionDays_FIVE_MONTHS,
	180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
	400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS,
	731: awslogs.RetentionDays_TWO_YEARS, 1096: awslogs.RetentionDays_THREE_YEARS,
	1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
	2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS,
	3288: awslogs.RetentionDays_NINE_YEARS, 3653: awslogs.RetentionDays_TEN_YEARS,
}

// LoadSettings reads every setting from the node's context, then from
// lookupEnv, then from its default, and rejects values that would only fail
// later, half-way through a CloudFormation deployment.
func LoadSettings(node constructs.Node, lookupEnv func(string) (string, bool)) (Settings, error) {
	v := make(map[string]string, len(SettingsTable))
	for _, s := range SettingsTable {
		v[s.Context] = s.Default
		if e, ok := lookupEnv(s.Env); ok && e != "" {
			v[s.Context] = e
		}
		if c := node.TryGetContext(&s.Context); c != nil {
			v[s.Context] = strings.TrimSpace(fmt.Sprint(c))
		}
	}

	out := Settings{
		Stage:         v["stage"],
		LogLevel:      strings.ToLower(v["logLevel"]),
		AlarmTopicARN: v["alarmTopicArn"],
		AssetDir:      v["assetDir"],
		X402: X402Settings{
			Network:        v["x402Network"],
			Asset:          v["x402Asset"],
			PayTo:          v["x402PayTo"],
			FacilitatorURL: v["x402FacilitatorUrl"],
			RPCURL:         v["x402RpcUrl"],
		},
		LiFi: LiFiSettings{BaseURL: v["lifiBaseUrl"], APIKey: v["lifiApiKey"]},
	}
	if !stagePattern.MatchString(out.Stage) {
		return Settings{}, fmt.Errorf("stage %q: want a letter then up to 31 letters, digits or hyphens", out.Stage)
	}
	if !logLevels[out.LogLevel] {
		return Settings{}, fmt.Errorf("logLevel %q: want debug, info, warn or error", out.LogLevel)
	}
	days, err := strconv.Atoi(v["logRetentionDays"])
	if _, ok := retentionDays[days]; err != nil || !ok {
		return Settings{}, fmt.Errorf("logRetentionDays %q: not a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ... 3653)", v["logRetentionDays"])
	}
	out.LogRetentionDays = days
	if out.Retain, err = strconv.ParseBool(v["retain"]); err != nil {
		return Settings{}, fmt.Errorf("retain %q: want true or false", v["retain"])
	}
	if out.AlarmTopicARN != "" && !strings.HasPrefix(out.AlarmTopicARN, "arn:") {
		return Settings{}, fmt.Errorf("alarmTopicArn %q: want an SNS topic ARN", out.AlarmTopicARN)
	}
	if out.AssetDir == "" {
		return Settings{}, fmt.Errorf("assetDir is empty")
	}
	if out.RPCURLs, err = parseRPCURLs(v["rpcUrls"]); err != nil {
		return Settings{}, err
	}
	if u, err := url.Parse(out.LiFi.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Settings{}, fmt.Errorf("lifiBaseUrl %q: want an http(s) URL", out.LiFi.BaseURL)
	}
	return out, nil
}

// rpcSchemes are the transports go-ethereum's client dials.
var rpcSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true}

// parseRPCURLs reads "1=https://…,8453=https://…". Errors name the entry by
// its position and chain id, never its URL: an RPC URL often embeds the
// provider's API key.
func parseRPCURLs(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for i, entry := range strings.Split(s, ",") {
		idText, raw, ok := strings.Cut(strings.TrimSpace(entry), "=")
		id, err := strconv.ParseUint(strings.TrimSpace(idText), 10, 64)
		if !ok || err != nil || id == 0 {
			return nil, fmt.Errorf("rpcUrls: entry %d: want <chainId>=<url> with a positive decimal chain id", i+1)
		}
		raw = strings.TrimSpace(raw)
		if u, err := url.Parse(raw); err != nil || !rpcSchemes[u.Scheme] || u.Host == "" {
			return nil, fmt.Errorf("rpcUrls: chain %d: want an http(s) or ws(s) URL", id)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("rpcUrls: chain %d is listed twice", id)
		}
		out[id] = raw
	}
	return out, nil
}

// StackID is the stack's construct id and CloudFormation name. The stage is
// part of it so `-c stage=prod` and `-c stage=dev` never touch each other.
func StackID(stage string) string { return "PlatformApi-" + stage }
