package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/transport"
)

// TestRemoteModelChoiceBounded: a remote channel may set llm.model and
// llm.scout_model only to a name of [manage] models, or, besides those
// and with no list, to model or scout_model as configured; anything else
// is refused with the names it may choose (not as "add set to [manage]
// remote"), and nothing is stored. The socket may choose any model.
func TestRemoteModelChoiceBounded(t *testing.T) {
	const llm = "\n[llm]\nmodel = \"big-model\"\nscout_model = \"tiny-model\"\n"
	const remote = "\n[manage]\nremote = [\"status\", \"get\", \"set\"]\n"
	mctx := transport.WithSource(context.Background(), mqttSet)
	tctx := transport.WithSource(context.Background(), telegramSrc)
	sctx := transport.WithSource(context.Background(), transport.Source{Channel: transport.ChannelSocket})
	type step struct {
		ctx        context.Context
		key, value string
		wantErr    string
	}
	for _, tt := range []struct {
		name  string
		extra string
		steps []step
	}{
		{"no list", llm + remote, []step{
			{mctx, "llm.model", "gpt-5-pro-max", `llm.model: a remote channel may choose only a model of [manage] models, or model or scout_model as configured: "big-model" or "tiny-model" (got "gpt-5-pro-max")`},
			{tctx, "llm.scout_model", "o1-pro", `(got "o1-pro")`},
			{mctx, "llm.model", "tiny-model", ""},
			{tctx, "llm.scout_model", "big-model", ""},
			{mctx, "llm.model", "big-model", ""},
			{sctx, "llm.model", "gpt-5-pro-max", ""},
			{mctx, "llm.model", "gpt-5-pro-max", `(got "gpt-5-pro-max")`}, // in force, but not the remote's to choose
		}},
		{"a list", llm + remote + "models = [\"mid-model\", \"meta-llama/Llama-3.1-8B-Instruct:q4\"]\n", []step{
			{mctx, "llm.model", "meta-llama/Llama-3.1-8B-Instruct:q4", ""},
			{tctx, "llm.model", "mid-model", ""},
			{mctx, "llm.scout_model", "big-model", ""},
			{mctx, "llm.model", "other-model", `"big-model", "tiny-model", "mid-model" or "meta-llama/Llama-3.1-8B-Instruct:q4" (got "other-model")`},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newOverlayApp(t, tt.extra)
			for _, s := range tt.steps {
				before, _ := a.db.Settings()
				_, err := a.cmds.Set(s.ctx, s.key, s.value)
				if s.wantErr == "" {
					if err != nil {
						t.Errorf("%s Set(%s, %s) = %v, want ok", transport.SourceOf(s.ctx), s.key, s.value, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), s.wantErr) {
					t.Errorf("%s Set(%s, %s) = %v, want an error with %q", transport.SourceOf(s.ctx), s.key, s.value, err, s.wantErr)
				}
				if errors.Is(err, alert.ErrNotAllowed) {
					t.Errorf("%s Set(%s, %s) = %v: ErrNotAllowed makes the transports answer \"add set to [manage] remote\", which is not why", transport.SourceOf(s.ctx), s.key, s.value, err)
				}
				if after, _ := a.db.Settings(); len(after) != len(before) {
					t.Errorf("a refused Set(%s, %s) stored something: %+v", s.key, s.value, after)
				}
			}
		})
	}
}
