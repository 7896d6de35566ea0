package store_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/store"
)

func Example() {
	dir, err := os.MkdirTemp("", "vigil")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := store.Open(filepath.Join(dir, "vigil.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	now := time.Date(2025, 6, 1, 3, 0, 0, 0, time.UTC)
	// One heartbeat: record the run, its samples and its alert in one commit.
	err = db.Update(func(tx *store.Tx) error {
		if _, _, err := tx.Enqueue(alert.Alert{ID: "a1", Device: "greenhouse-pi", Time: now,
			Severity: alert.Critical, Source: alert.SourceRule, Rule: "too_hot",
			State: alert.StateFiring, Summary: "greenhouse at 36 °C"}); err != nil {
			return err
		}
		if _, err := tx.AppendRun(store.Run{Start: now, Outcome: "alert", Alerts: []string{"a1"}}); err != nil {
			return err
		}
		return tx.AppendHistory([]device.Snapshot{{Time: now,
			Readings: map[string]device.Value{"air.temperature": {Value: 36, Unit: device.Celsius}}}})
	})
	if err != nil {
		log.Fatal(err)
	}

	// MQTT delivers and acknowledges; Telegram has not yet.
	active := []string{"mqtt", "telegram"}
	err = db.Update(func(tx *store.Tx) error {
		pending, err := tx.Pending("mqtt", 10)
		if err != nil {
			return err
		}
		for _, e := range pending {
			fmt.Printf("mqtt sends #%d: %s\n", e.Seq, e.Alert.Text())
			if err := tx.Ack("mqtt", e.Seq, active); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	err = db.View(func(tx *store.Tx) error {
		for _, name := range active {
			n, err := tx.Depth(name)
			if err != nil {
				return err
			}
			fmt.Printf("%s depth: %d\n", name, n)
		}
		runs, err := tx.Runs(1)
		if err != nil {
			return err
		}
		hist, err := tx.History(now.Add(-time.Hour))
		if err != nil {
			return err
		}
		fmt.Printf("last run #%d: %s, history: %v\n", runs[0].Seq, runs[0].Outcome, hist[0].Readings["air.temperature"])
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("commits:", db.Commits(), "check:", db.Check())
	// Output:
	// mqtt sends #1: [greenhouse-pi] critical too_hot: greenhouse at 36 °C
	// mqtt depth: 0
	// telegram depth: 1
	// last run #1: alert, history: {36 °C}
	// commits: 2 check: <nil>
}
