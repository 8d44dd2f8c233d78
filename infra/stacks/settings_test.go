package stacks

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestSettingsDefaultToADevStageWithTopUpsDisabled(t *testing.T) {
	got, err := LoadSettings(newApp(t, nil).Node(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		Stage: "dev", LogLevel: "info", LogRetentionDays: 30, Retain: true, AssetDir: "build",
		X402: X402Settings{
			Network:        "eip155:84532",
			Asset:          "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
			FacilitatorURL: "https://x402.org/facilitator",
		},
		RPCURLs: map[uint64]string{},
		LiFi:    LiFiSettings{BaseURL: "https://li.quest/v1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", got, want)
	}
}

func TestContextBeatsEnvironmentBeatsDefault(t *testing.T) {
	vars := env(map[string]string{"STAGE": "from-env", "LOG_LEVEL": "warn", "X402_PAY_TO": "0xenv", "RETAIN": ""})
	got, err := LoadSettings(newApp(t, map[string]any{"stage": "fromContext", "retain": false}).Node(), vars)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stage != "fromContext" || got.LogLevel != "warn" || got.X402.PayTo != "0xenv" || got.Retain {
		t.Errorf("got stage %q, log level %q, payTo %q, retain %v; want fromContext, warn, 0xenv, false",
			got.Stage, got.LogLevel, got.X402.PayTo, got.Retain)
	}
}

func TestSettingsThatWouldFailTheDeploymentAreRejected(t *testing.T) {
	for _, c := range []struct {
		key   string
		value any
	}{
		{"stage", "my_stage"},
		{"logLevel", "loud"},
		{"logRetentionDays", 42},
		{"retain", "maybe"},
		{"alarmTopicArn", "ops-topic"},
		{"assetDir", ""},
		{"rpcUrls", "https://mainnet.example"},
		{"rpcUrls", "base=https://base.example"},
		{"rpcUrls", "0=https://zero.example"},
		{"rpcUrls", "1=mainnet.example"},
		{"rpcUrls", "1=ftp://mainnet.example"},
		{"rpcUrls", "1=https://a.example,1=https://b.example"},
		{"lifiBaseUrl", "li.quest/v1"},
	} {
		if _, err := LoadSettings(newApp(t, map[string]any{c.key: c.value}).Node(), env(nil)); err == nil {
			t.Errorf("%s=%v accepted, want an error", c.key, c.value)
		}
	}
}

// TestRPCURLErrorsNeverEchoTheURL: an RPC URL often carries the
// provider's key in its path, and synth errors end up in CI logs.
func TestRPCURLErrorsNeverEchoTheURL(t *testing.T) {
	for _, v := range []string{"1=ftp://rpc.example/v2/SECRETKEY", "1=https://rpc.example/v2/SECRETKEY,1=https://rpc.example/v2/SECRETKEY"} {
		_, err := LoadSettings(newApp(t, map[string]any{"rpcUrls": v}).Node(), env(nil))
		if err == nil || strings.Contains(err.Error(), "SECRETKEY") {
			t.Errorf("rpcUrls %q: error %v; want one that does not repeat the URL", v, err)
		}
	}
}

func TestRPCURLsAreParsedPerChain(t *testing.T) {
	got, err := LoadSettings(newApp(t, nil).Node(), env(map[string]string{
		"RPC_URLS": " 1=https://eth.example/v2/k , 8453=wss://base.example ", "LIFI_API_KEY": "lifi-key",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{1: "https://eth.example/v2/k", 8453: "wss://base.example"}
	if !reflect.DeepEqual(got.RPCURLs, want) || got.LiFi.APIKey != "lifi-key" {
		t.Errorf("rpcUrls %v, LI.FI key %q; want %v and lifi-key", got.RPCURLs, got.LiFi.APIKey, want)
	}
}

func TestReadmeDocumentsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range SettingsTable {
		for _, name := range []string{"`" + s.Context + "`", "`" + s.Env + "`"} {
			if !strings.Contains(string(readme), name) {
				t.Errorf("infra/README.md does not mention %s", name)
			}
		}
	}
}
