package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-iot/vigil/device"
)

// Home Assistant device discovery, one retained message per device:
// https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload
// The abbreviations dev, o, cmps and p are the documented keys; the
// component options use their long names for readability.

const projectURL = "https://github.com/vigil-iot/vigil"

type haDevice struct {
	IDs          []string `json:"ids"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"mf"`
	Model        string   `json:"mdl"`
	SWVersion    string   `json:"sw,omitempty"`
}

type haOrigin struct {
	Name      string `json:"name"`
	SWVersion string `json:"sw,omitempty"`
	URL       string `json:"url"`
}

type haComponent struct {
	Platform            string `json:"p"`
	Name                string `json:"name"`
	UniqueID            string `json:"unique_id"`
	DefaultEntityID     string `json:"default_entity_id"`
	AvailabilityTopic   string `json:"availability_topic"`
	StateTopic          string `json:"state_topic"`
	ValueTemplate       string `json:"value_template,omitempty"`
	JSONAttributesTopic string `json:"json_attributes_topic,omitempty"`
	DeviceClass         string `json:"device_class,omitempty"`
	StateClass          string `json:"state_class,omitempty"`
	Unit                string `json:"unit_of_measurement,omitempty"`
	PayloadOn           string `json:"payload_on,omitempty"`
	PayloadOff          string `json:"payload_off,omitempty"`
	EntityCategory      string `json:"entity_category,omitempty"`
}

type haDiscovery struct {
	Device     haDevice               `json:"dev"`
	Origin     haOrigin               `json:"o"`
	Components map[string]haComponent `json:"cmps"`
	QoS        int                    `json:"qos"`
}

// discoveryTopic is where the device message is published.
func (c *Client) discoveryTopic() string {
	return c.cfg.DiscoveryPrefix + "/device/" + c.cfg.DeviceID + "/config"
}

// discovery builds the device message: the problem binary sensor, the last
// heartbeat outcome, and one entity per reading key in sensors.
func (c *Client) discovery(sensors map[string]device.Unit) haDiscovery {
	id := slug(c.cfg.DeviceID)
	status := c.topic("status")
	d := haDiscovery{
		Device: haDevice{
			IDs:          []string{"vigil_" + id},
			Name:         c.cfg.DeviceID,
			Manufacturer: "vigil",
			Model:        "vigil",
			SWVersion:    c.cfg.Version,
		},
		Origin:     haOrigin{Name: "vigil", SWVersion: c.cfg.Version, URL: projectURL},
		Components: map[string]haComponent{},
		QoS:        qos,
	}
	d.Components[id+"_problem"] = haComponent{
		Platform:            "binary_sensor",
		Name:                "Problem",
		UniqueID:            "vigil_" + id + "_problem",
		DefaultEntityID:     "binary_sensor." + id + "_problem",
		AvailabilityTopic:   status,
		StateTopic:          c.topic("problem"),
		JSONAttributesTopic: c.topic("problem/attributes"),
		DeviceClass:         "problem",
		PayloadOn:           "ON",
		PayloadOff:          "OFF",
	}
	d.Components[id+"_heartbeat"] = haComponent{
		Platform:            "sensor",
		Name:                "Heartbeat",
		UniqueID:            "vigil_" + id + "_heartbeat",
		DefaultEntityID:     "sensor." + id + "_heartbeat",
		AvailabilityTopic:   status,
		StateTopic:          c.topic("heartbeat"),
		ValueTemplate:       "{{ value_json.outcome }}",
		JSONAttributesTopic: c.topic("heartbeat"),
		EntityCategory:      "diagnostic",
	}
	for _, k := range slices.Sorted(maps.Keys(sensors)) {
		obj := id + "_" + slug(k)
		comp := haComponent{
			Name:              strings.ReplaceAll(k, ".", " "),
			UniqueID:          "vigil_" + obj,
			AvailabilityTopic: status,
			StateTopic:        c.topic("sensors"),
		}
		// A reading missing from a snapshot (its sensor failed) renders
		// "None", which Home Assistant shows as unknown.
		ref := "value_json.readings['" + k + "']"
		has := "'" + k + "' in value_json.readings"
		unit := sensors[k]
		if unit == device.Bool {
			comp.Platform = "binary_sensor"
			comp.PayloadOn, comp.PayloadOff = "ON", "OFF"
			comp.ValueTemplate = "{{ ('ON' if " + ref + ".value else 'OFF') if " + has + " else None }}"
		} else {
			comp.Platform = "sensor"
			comp.StateClass = "measurement"
			comp.Unit = string(unit)
			_, quantity := device.SplitKey(k)
			comp.DeviceClass = deviceClass(quantity, unit)
			comp.ValueTemplate = "{{ " + ref + ".value if " + has + " else None }}"
		}
		comp.DefaultEntityID = comp.Platform + "." + obj
		d.Components[obj] = comp
	}
	return d
}

// deviceClass maps a reading to a Home Assistant sensor device class where
// the unit makes it unambiguous, or "" for none.
func deviceClass(quantity string, u device.Unit) string {
	switch u {
	case device.Celsius:
		return "temperature"
	case device.HectoPascal:
		return "pressure"
	case device.Volt:
		return "voltage"
	case device.Ampere:
		return "current"
	case device.Watt:
		return "power"
	case device.Lux:
		return "illuminance"
	case device.Megabyte:
		return "data_size"
	case device.Second:
		return "duration"
	case device.Percent:
		if strings.Contains(quantity, "humidity") {
			return "humidity"
		}
	case device.PPM:
		if quantity == "co2" {
			return "carbon_dioxide"
		}
	}
	return ""
}

// slug turns a device id or reading key into a Home Assistant object id:
// lowercase letters, digits and underscores.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// announce publishes the discovery message, retained, and waits for the
// PUBACK. Concurrent calls are serialised so the newest set of sensors is
// the one the broker keeps. Unless force, it sends nothing when this
// connection already carried a message with the current sensors.
func (c *Client) announce(ctx context.Context, force bool) error {
	c.announceMu.Lock()
	defer c.announceMu.Unlock()
	c.mu.Lock()
	if !force && c.annConn == c.conns && c.annVer == c.sensorsVer {
		c.mu.Unlock()
		return nil
	}
	sensors := maps.Clone(c.sensors)
	conn, ver := c.conns, c.sensorsVer
	c.mu.Unlock()
	payload, err := json.Marshal(c.discovery(sensors))
	if err != nil {
		return fmt.Errorf("encode discovery: %w", err)
	}
	if err := c.publish(ctx, c.discoveryTopic(), true, payload); err != nil {
		return fmt.Errorf("publish discovery: %w", err)
	}
	c.mu.Lock()
	c.annConn, c.annVer = conn, ver
	c.mu.Unlock()
	return nil
}

func (c *Client) announceLogged(ctx context.Context, force bool) {
	if !c.cfg.HomeAssistant {
		return
	}
	actx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := c.announce(actx, force); err != nil {
		c.log.Warn("mqtt discovery", keyErr, err)
	}
}
