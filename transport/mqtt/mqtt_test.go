package mqtt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/vigil-iot/vigil/alert"
	"github.com/vigil-iot/vigil/config"
	"github.com/vigil-iot/vigil/device"
	"github.com/vigil-iot/vigil/internal/mosquittotest"
	"github.com/vigil-iot/vigil/transport"
)

var _ interface {
	Name() string
	Notify(context.Context, alert.Alert) error
	PublishHeartbeat(context.Context, transport.Heartbeat) error
	PublishSensors(context.Context, device.Snapshot) error
} = (*Client)(nil)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name, payload string
		want          command
		wantErr       string
	}{
		{"check", "", command{Name: "check"}, ""},
		{"check", "  {} ", command{Name: "check"}, ""},
		{"check", "now", command{}, "takes no arguments"},
		{"check", `{"x":1}`, command{}, "takes no arguments"},
		{"check", "null", command{}, "takes no arguments"},
		{"resume", "", command{Name: "resume"}, ""},
		{"resume", "{}{}", command{}, "takes no arguments"},
		{"pause", "30", command{Name: "pause", Minutes: 30}, ""},
		{"pause", " 1\n", command{Name: "pause", Minutes: 1}, ""},
		{"pause", "1440", command{Name: "pause", Minutes: 1440}, ""},
		{"pause", `{"minutes": 5}`, command{Name: "pause", Minutes: 5}, ""},
		// The range is the commands' to enforce, once for every channel.
		{"pause", "0", command{Name: "pause", Minutes: 0}, ""},
		{"pause", "1441", command{Name: "pause", Minutes: 1441}, ""},
		{"pause", "", command{}, "want minutes"},
		{"pause", "5m", command{}, "want minutes"},
		{"pause", "2.5", command{}, "want minutes"},
		{"pause", `{"minutes": 2.5}`, command{}, "want minutes"},
		{"pause", `{"minutes": "5"}`, command{}, "want minutes"},
		{"pause", `{"minutes": 5, "why": "x"}`, command{}, "unknown field"},
		{"pause", `{}`, command{}, `missing "minutes"`},
		{"pause", `{"minutes": 5} 7`, command{}, "trailing data"},
		{"pause", `{"minutes": 99999999999999999999}`, command{}, "want minutes"},
		{"pause", strings.Repeat("1", 300), command{}, "longer than 256"},
		{"get", "", command{Name: "get"}, ""},
		{"get", "  heartbeat.interval\n", command{Name: "get", Key: "heartbeat.interval"}, ""},
		{"get", `{"key": " llm.model "}`, command{Name: "get", Key: "llm.model"}, ""},
		{"get", `{"key": ""}`, command{Name: "get"}, ""},
		{"get", "heartbeat interval", command{}, "cmd/get: key \"heartbeat interval\" is not one word"},
		{"get", `{"name": "x"}`, command{}, "unknown field"},
		{"get", `{}`, command{}, `cmd/get: missing "key"`},
		{"set", "heartbeat.interval 10m", command{Name: "set", Key: "heartbeat.interval", Value: "10m"}, ""},
		{"set", "heartbeat.active_hours  07:00-12:00 14:00-22:00 ", command{Name: "set", Key: "heartbeat.active_hours", Value: "07:00-12:00 14:00-22:00"}, ""},
		{"set", "rule.too_hot.enabled\tfalse", command{Name: "set", Key: "rule.too_hot.enabled", Value: "false"}, ""},
		{"set", `{"key": "llm.model", "value": "qwen2.5:3b"}`, command{Name: "set", Key: "llm.model", Value: "qwen2.5:3b"}, ""},
		{"set", "heartbeat.interval", command{}, `cmd/set: want "KEY VALUE" or {"key": "...", "value": "..."}, got "heartbeat.interval"`},
		{"set", "", command{}, `cmd/set: want "KEY VALUE"`},
		{"set", `{"key": "llm.model"}`, command{}, `cmd/set: want both "key" and "value"`},
		{"set", `{"key": "llm.model", "value": ""}`, command{}, `cmd/set: want "KEY VALUE"`},
		{"set", `{"key": "a b", "value": "1"}`, command{}, "not one word"},
		{"set", `{"key": "x", "value": 10}`, command{}, "cmd/set: want"},
		{"set", "x " + strings.Repeat("v", 300), command{}, "longer than 256"},
		{"unset", "heartbeat.interval", command{Name: "unset", Key: "heartbeat.interval"}, ""},
		{"unset", `{"key": "heartbeat.interval"}`, command{Name: "unset", Key: "heartbeat.interval"}, ""},
		{"unset", "", command{}, "cmd/unset: no key"},
		{"unset", `{"key": "  "}`, command{}, "cmd/unset: no key"},
		{"checklist", "show", command{Name: "checklist", Op: "show"}, ""},
		{"checklist", " reset\n", command{Name: "checklist", Op: "reset"}, ""},
		{"checklist", `{"op": "show"}`, command{Name: "checklist", Op: "show"}, ""},
		{"checklist", `{"op": "reset"}`, command{Name: "checklist", Op: "reset"}, ""},
		{"checklist", `{"op": "set", "text": "- Is the fan on?\n"}`, command{Name: "checklist", Op: "set", Text: "- Is the fan on?\n"}, ""},
		{"checklist", `{"op": "set", "text": ""}`, command{Name: "checklist", Op: "set"}, ""},
		{"checklist", "", command{}, `cmd/checklist: want {"op": "show"}`},
		{"checklist", "set", command{}, `cmd/checklist: want {"op": "show"}`},
		{"checklist", "- Is the fan on?", command{}, `got "- Is the fan on?"`},
		{"checklist", `{"op": "set"}`, command{}, `"op": "set" needs "text"`},
		{"checklist", `{"op": "show", "text": "x"}`, command{}, `"text" goes only with "op": "set"`},
		{"checklist", `{"op": "drop"}`, command{}, `unknown op "drop"`},
		{"checklist", `{"op": "set", "text": "` + strings.Repeat("x", 16<<10+1) + `"}`, command{}, "text is 16385 bytes, more than the checklist's 16 KiB"},
		{"checklist", strings.Repeat(" ", 40<<10), command{}, "payload is 40960 bytes, more than 33024 (the checklist itself may be at most 16 KiB)"},
		{"ack", "", command{Name: "ack"}, ""},
		{"ack", " too_hot\n", command{Name: "ack", Target: "too_hot"}, ""},
		{"ack", "e2e-3f2a9c0d11b4e5f6", command{Name: "ack", Target: "e2e-3f2a9c0d11b4e5f6"}, ""},
		{"ack", `{"target": " llm "}`, command{Name: "ack", Target: "llm"}, ""},
		{"ack", `{}`, command{Name: "ack"}, ""},
		{"ack", "too hot", command{}, `cmd/ack: key "too hot" is not one word`},
		{"ack", `{"rule": "too_hot"}`, command{}, "unknown field"},
		{"ack", `{"target": 7}`, command{}, "cmd/ack: want"},
		{"ack", strings.Repeat("x", 300), command{}, "longer than 256"},
		{"reboot", "", command{}, `unknown command "reboot"`},
		{"result", `{"ok":true}`, command{}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.payload, func(t *testing.T) {
			got, err := parseCommand(tt.name, []byte(tt.payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseCommand(%q, %q) = %+v, %v; want error containing %q", tt.name, tt.payload, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseCommand(%q, %q) = %+v, %v; want %+v", tt.name, tt.payload, got, err, tt.want)
			}
		})
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"", "{}", "30", `{"minutes":5}`, "0", "1441", `{"minutes":1e3}`, "\x00", "null",
		"heartbeat.interval 10m", `{"key":"k","value":"v"}`, `{"key":"k"}`, "show", `{"op":"set","text":"a\nb"}`, `{"op":"reset"}`,
		"too_hot", `{"target":"llm"}`, "approve p7", `{"op":"drop","target":"x"}`} {
		for _, name := range []string{"check", "pause", "resume", "get", "set", "unset", "checklist", "ack", "rule", "x"} {
			f.Add(name, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		cmd, err := parseCommand(name, payload)
		if err != nil {
			if cmd != (command{}) {
				t.Fatalf("parseCommand(%q, %q) returned %+v with error %v", name, payload, cmd, err)
			}
			return
		}
		if cmd.Name != name {
			t.Fatalf("parseCommand(%q, %q).Name = %q", name, payload, cmd.Name)
		}
		if cmd.Name != cmdPause && cmd.Minutes != 0 {
			t.Fatalf("parseCommand(%q, %q).Minutes = %d", name, payload, cmd.Minutes)
		}
		if strings.ContainsFunc(cmd.Key, unicode.IsSpace) {
			t.Fatalf("parseCommand(%q, %q).Key = %q, not one word", name, payload, cmd.Key)
		}
		switch cmd.Name {
		case cmdAck:
			if cmd.Key != "" || cmd.Value != "" || cmd.Op != "" || strings.ContainsFunc(cmd.Target, unicode.IsSpace) {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		case cmdRule:
			if cmd.Key != "" || cmd.Value != "" || cmd.Target == "" || strings.ContainsFunc(cmd.Target, unicode.IsSpace) ||
				!slices.Contains([]string{transport.RuleApprove, transport.RuleReject, transport.RuleDrop}, cmd.Op) {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		case cmdPause, cmdCheck, cmdResume:
			if cmd.Key != "" || cmd.Value != "" || cmd.Op != "" || cmd.Text != "" || cmd.Target != "" {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		case cmdGet, cmdUnset:
			if (cmd.Key == "" && name == cmdUnset) || cmd.Value != "" || cmd.Op != "" {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		case cmdSet:
			if cmd.Key == "" || cmd.Value == "" || cmd.Value != strings.TrimSpace(cmd.Value) {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		case cmdList:
			if !slices.Contains([]string{transport.ChecklistShow, transport.ChecklistSet, transport.ChecklistReset}, cmd.Op) ||
				(cmd.Op != transport.ChecklistSet && cmd.Text != "") || len(cmd.Text) > maxChecklist {
				t.Fatalf("parseCommand(%q, %q) = %+v", name, payload, cmd)
			}
		default:
			t.Fatalf("parseCommand accepted unknown command %q", name)
		}
	})
}

// TestChecklistLimitIsConfigs: the payload bound follows the checklist's
// own limit, which config.ParseChecklist enforces (the transport may not
// import config, so the number is repeated here and kept equal).
func TestChecklistLimitIsConfigs(t *testing.T) {
	if maxChecklist != config.MaxChecklistSize {
		t.Errorf("maxChecklist = %d, want config.MaxChecklistSize %d", maxChecklist, config.MaxChecklistSize)
	}
}

func TestDeviceClass(t *testing.T) {
	tests := []struct {
		quantity string
		unit     device.Unit
		want     string
	}{
		{"temperature", device.Celsius, "temperature"},
		{"humidity", device.Percent, "humidity"},
		{"disk_used", device.Percent, ""},
		{"pressure", device.HectoPascal, "pressure"},
		{"bus_voltage", device.Volt, "voltage"},
		{"current", device.Ampere, "current"},
		{"power", device.Watt, "power"},
		{"illuminance", device.Lux, "illuminance"},
		{"co2", device.PPM, "carbon_dioxide"},
		{"tvoc", device.PPB, ""},
		{"mem_available", device.Megabyte, "data_size"},
		{"uptime", device.Second, "duration"},
		{"load1", device.Count, ""},
	}
	for _, tt := range tests {
		if got := deviceClass(tt.quantity, tt.unit); got != tt.want {
			t.Errorf("deviceClass(%q, %q) = %q, want %q", tt.quantity, tt.unit, got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"greenhouse-pi":   "greenhouse_pi",
		"air.temperature": "air_temperature",
		"Board.SoC":       "board_soc",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDiscoveryComponents(t *testing.T) {
	c := New(Config{DeviceID: "greenhouse-pi", HomeAssistant: true, Version: "1.2.3"}, nil, nil)
	d := c.discovery(map[string]device.Unit{
		"air.temperature": device.Celsius,
		"board.throttled": device.Bool,
		"board.load1":     device.Count,
	})
	if d.Device.Name != "greenhouse-pi" || len(d.Device.IDs) != 1 || d.Device.IDs[0] != "vigil_greenhouse_pi" {
		t.Errorf("dev = %+v", d.Device)
	}
	if d.Origin.Name != "vigil" || d.Origin.SWVersion != "1.2.3" {
		t.Errorf("o = %+v", d.Origin)
	}
	want := map[string]haComponent{
		"greenhouse_pi_air_temperature": {
			Platform:          "sensor",
			Name:              "air temperature",
			UniqueID:          "vigil_greenhouse_pi_air_temperature",
			DefaultEntityID:   "sensor.greenhouse_pi_air_temperature",
			AvailabilityTopic: "vigil/greenhouse-pi/status",
			StateTopic:        "vigil/greenhouse-pi/sensors",
			ValueTemplate:     "{{ value_json.readings['air.temperature'].value if 'air.temperature' in value_json.readings else None }}",
			DeviceClass:       "temperature",
			StateClass:        "measurement",
			Unit:              "°C",
		},
		"greenhouse_pi_board_throttled": {
			Platform:          "binary_sensor",
			Name:              "board throttled",
			UniqueID:          "vigil_greenhouse_pi_board_throttled",
			DefaultEntityID:   "binary_sensor.greenhouse_pi_board_throttled",
			AvailabilityTopic: "vigil/greenhouse-pi/status",
			StateTopic:        "vigil/greenhouse-pi/sensors",
			ValueTemplate:     "{{ ('ON' if value_json.readings['board.throttled'].value else 'OFF') if 'board.throttled' in value_json.readings else None }}",
			PayloadOn:         "ON",
			PayloadOff:        "OFF",
		},
		"greenhouse_pi_board_load1": {
			Platform:          "sensor",
			Name:              "board load1",
			UniqueID:          "vigil_greenhouse_pi_board_load1",
			DefaultEntityID:   "sensor.greenhouse_pi_board_load1",
			AvailabilityTopic: "vigil/greenhouse-pi/status",
			StateTopic:        "vigil/greenhouse-pi/sensors",
			ValueTemplate:     "{{ value_json.readings['board.load1'].value if 'board.load1' in value_json.readings else None }}",
			StateClass:        "measurement",
		},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, d.Components[k]); diff != "" {
			t.Errorf("cmps[%q] mismatch (-want +got):\n%s", k, diff)
		}
	}
	p := d.Components["greenhouse_pi_problem"]
	if p.Platform != "binary_sensor" || p.DeviceClass != "problem" || p.StateTopic != "vigil/greenhouse-pi/problem" ||
		p.JSONAttributesTopic != "vigil/greenhouse-pi/problem/attributes" {
		t.Errorf("problem component = %+v", p)
	}
	if len(d.Components) != 5 {
		t.Errorf("len(cmps) = %d, want 5 (problem, heartbeat, 3 readings)", len(d.Components))
	}
}

func TestNotifyWithoutConnection(t *testing.T) {
	c := New(Config{DeviceID: "d", MinSeverity: alert.Warning}, nil, nil)
	if c.Connected() {
		t.Fatal("Connected() = true before Run")
	}
	err := c.Notify(context.Background(), alert.Alert{ID: "1", Severity: alert.Critical})
	if !errors.Is(err, ErrNotConnected) {
		t.Errorf("Notify(critical) before Run = %v, want ErrNotConnected", err)
	}
	if err := c.Notify(context.Background(), alert.Alert{ID: "2", Severity: alert.Info}); err != nil {
		t.Errorf("Notify(info) below min severity = %v, want nil (acknowledged, not sent)", err)
	}
	if err := c.PublishHeartbeat(context.Background(), transport.Heartbeat{Outcome: "ok"}); !errors.Is(err, ErrNotConnected) {
		t.Errorf("PublishHeartbeat before Run = %v, want ErrNotConnected", err)
	}
}

func TestFinite(t *testing.T) {
	snap := device.Snapshot{Readings: map[string]device.Value{
		"a.x": {Value: 1, Unit: device.Volt},
		"a.y": {Value: math.NaN(), Unit: device.Volt},
		"a.z": {Value: math.Inf(1), Unit: device.Volt},
	}, Errors: map[string]string{"b": "nack"}}
	got := finite(snap)
	if len(got.Readings) != 1 || got.Readings["a.x"].Value != 1 {
		t.Errorf("finite readings = %v, want only a.x", got.Readings)
	}
	if len(got.Errors) != 3 || got.Errors["b"] != "nack" || got.Errors["a.y"] == "" || got.Errors["a.z"] == "" {
		t.Errorf("finite errors = %v, want b, a.y, a.z", got.Errors)
	}
	if len(snap.Readings) != 3 {
		t.Errorf("finite modified its argument: %v", snap.Readings)
	}
}

func TestTLSConfig(t *testing.T) {
	p := mosquittotest.NewPKI(t)
	tests := []struct {
		name           string
		ca, cert, key  []byte
		wantErr        string
		wantRoots      bool
		wantClientCert bool
	}{
		{name: "system roots", wantRoots: false},
		{name: "ca only", ca: p.CA, wantRoots: true},
		{name: "ca and client cert", ca: p.CA, cert: p.ClientCert, key: p.ClientKey, wantRoots: true, wantClientCert: true},
		{name: "garbage ca", ca: []byte("not pem"), wantErr: "no certificate found"},
		{name: "cert without key", ca: p.CA, cert: p.ClientCert, wantErr: "client certificate"},
		{name: "mismatched key", ca: p.CA, cert: p.ClientCert, key: p.ServerKey, wantErr: "client certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := TLSConfig(tt.ca, tt.cert, tt.key)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("TLSConfig() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("TLSConfig() = %v", err)
			}
			if got := cfg.RootCAs != nil; got != tt.wantRoots {
				t.Errorf("RootCAs set = %v, want %v", got, tt.wantRoots)
			}
			if got := len(cfg.Certificates) == 1; got != tt.wantClientCert {
				t.Errorf("client certificate set = %v, want %v", got, tt.wantClientCert)
			}
		})
	}
}

func ExampleTLSConfig() {
	_, err := TLSConfig([]byte("-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"), nil, nil)
	fmt.Println(err)
	// Output: mqtt: ca: no certificate found in PEM data
}
