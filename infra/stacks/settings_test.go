package stacks

import (
	"os"
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
	}
	if got != want {
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
	for key, value := range map[string]any{
		"stage":            "my_stage",
		"logLevel":         "loud",
		"logRetentionDays": 42,
		"retain":           "maybe",
		"alarmTopicArn":    "ops-topic",
		"assetDir":         "",
	} {
		if _, err := LoadSettings(newApp(t, map[string]any{key: value}).Node(), env(nil)); err == nil {
			t.Errorf("%s=%v accepted, want an error", key, value)
		}
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
