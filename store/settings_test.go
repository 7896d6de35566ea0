package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSettingsSurviveReopen: the overlay is kept by key, sorted, replaced
// by a later put, removed by delete, and read back after a reopen and by a
// read-only open.
func TestSettingsSurviveReopen(t *testing.T) {
	db := openTemp(t, Options{})
	at := t0.Add(time.Minute)
	puts := []Setting{
		{Key: "rule.too_hot.enabled", Value: "false", By: "telegram chat 1 user 2", At: at},
		{Key: "heartbeat.interval", Value: "10m", By: "cli", At: at},
		{Key: "llm.model", Value: "gpt-4o", By: "socket", At: at},
		{Key: "heartbeat.interval", Value: "15m", By: "mqtt vigil/dev/cmd/set", At: at.Add(time.Second)},
	}
	for _, s := range puts {
		if err := db.PutSetting(s); err != nil {
			t.Fatalf("PutSetting(%+v): %v", s, err)
		}
	}
	found, err := db.DeleteSetting("llm.model")
	if err != nil || !found {
		t.Fatalf("DeleteSetting(llm.model) = %v, %v, want true, nil", found, err)
	}
	if found, err := db.DeleteSetting("llm.model"); err != nil || found {
		t.Fatalf("second DeleteSetting(llm.model) = %v, %v, want false, nil", found, err)
	}
	want := []Setting{
		{Key: "heartbeat.interval", Value: "15m", By: "mqtt vigil/dev/cmd/set", At: at.Add(time.Second)},
		{Key: "rule.too_hot.enabled", Value: "false", By: "telegram chat 1 user 2", At: at},
	}
	db = reopen(t, db, Options{})
	got, err := db.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Settings after reopen (-want +got):\n%s", diff)
	}
	ro := reopen(t, db, Options{ReadOnly: true})
	got, err = ro.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Settings read-only (-want +got):\n%s", diff)
	}
	if err := ro.PutSetting(Setting{Key: "heartbeat.enabled", Value: "false"}); err == nil {
		t.Error("PutSetting on a read-only file succeeded")
	}
}

func TestPutSettingNeedsKey(t *testing.T) {
	db := openTemp(t, Options{})
	if err := db.PutSetting(Setting{Value: "10m"}); err == nil {
		t.Error("PutSetting with an empty key succeeded")
	}
}
