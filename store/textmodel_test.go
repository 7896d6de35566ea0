package store

import "testing"

func TestTextOnlyModel(t *testing.T) {
	db := openTemp(t, Options{})
	update(t, db, func(tx *Tx) error { return tx.SetTextOnlyModel("gemma:2b") })
	db = reopen(t, db, Options{})
	view(t, db, func(tx *Tx) error {
		for model, want := range map[string]bool{"gemma:2b": true, "gemma:2": false, "llama3.1:8b": false} {
			if got, err := tx.TextOnlyModel(model); got != want || err != nil {
				t.Errorf("TextOnlyModel(%q) = %t, %v, want %t", model, got, err, want)
			}
		}
		return nil
	})
}
