// Package mqttc is a small MQTT 3.1.1 client connection: CONNECT with a
// Last Will, PUBLISH and SUBSCRIBE at QoS 0 and 1, keepalive pings, and
// inbound PUBLISH delivered to a callback.
//
// It is hand-written instead of using paho.mqtt.golang on purpose. vigil's
// resident memory tracks the size of its binary (the kernel maps nearly
// every page of the text near anything touched), and paho with its
// WebSocket and proxy dependencies adds about 350 KB of code that vigil does
// not need: it keeps its own durable outbox, reconnects on its own schedule
// and never needs QoS 2, persistent sessions or in-memory message stores.
// One Conn is one network connection; the caller redials after Done.
package mqttc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Control packet types (MQTT 3.1.1 §2.2.1).
const (
	typeConnect     = 1
	typeConnack     = 2
	typePublish     = 3
	typePuback      = 4
	typePubrec      = 5
	typePubrel      = 6
	typePubcomp     = 7
	typeSubscribe   = 8
	typeSuback      = 9
	typeUnsubscribe = 10
	typeUnsuback    = 11
	typePingreq     = 12
	typePingresp    = 13
	typeDisconnect  = 14
)

// maxRemaining is the largest remaining length MQTT can encode (§2.2.3).
const maxRemaining = 268_435_455

// packet is one control packet as read from the wire. For PUBLISH, body
// holds the variable header and at most the first payload limit bytes.
type packet struct {
	typ   byte
	flags byte
	body  []byte
	// PUBLISH only.
	topic     string
	id        uint16
	payload   []byte
	truncated bool // the payload was longer than the read limit; the rest was discarded
}

var errMalformed = errors.New("malformed packet")

// readPacket reads one control packet. Packets other than PUBLISH larger
// than limit are an error; a PUBLISH payload beyond limit bytes is read and
// discarded (the packet is still acknowledged) and marked truncated.
func readPacket(r *bufio.Reader, limit int) (packet, error) {
	h, err := r.ReadByte()
	if err != nil {
		return packet{}, err
	}
	p := packet{typ: h >> 4, flags: h & 0x0f}
	n, err := readLength(r)
	if err != nil {
		return packet{}, err
	}
	if p.typ != typePublish {
		if n > limit {
			return packet{}, fmt.Errorf("%w: %s of %d bytes exceeds %d", errMalformed, typeName(p.typ), n, limit)
		}
		p.body = make([]byte, n)
		if _, err := io.ReadFull(r, p.body); err != nil {
			return packet{}, unexpected(err)
		}
		return p, nil
	}
	qos := (p.flags >> 1) & 3
	if qos > 1 {
		return packet{}, fmt.Errorf("%w: PUBLISH at QoS %d (subscriptions are QoS 1 at most)", errMalformed, qos)
	}
	// Variable header: topic length, topic, packet id when QoS > 0.
	if n < 2 {
		return packet{}, fmt.Errorf("%w: PUBLISH of %d bytes", errMalformed, n)
	}
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return packet{}, unexpected(err)
	}
	tl := int(binary.BigEndian.Uint16(l[:]))
	rest := n - 2
	hdr := tl
	if qos > 0 {
		hdr += 2
	}
	if hdr > rest || tl > limit {
		return packet{}, fmt.Errorf("%w: PUBLISH topic of %d bytes in a packet of %d", errMalformed, tl, n)
	}
	vh := make([]byte, hdr)
	if _, err := io.ReadFull(r, vh); err != nil {
		return packet{}, unexpected(err)
	}
	p.topic = string(vh[:tl])
	if qos > 0 {
		p.id = binary.BigEndian.Uint16(vh[tl:])
		if p.id == 0 {
			return packet{}, fmt.Errorf("%w: PUBLISH with packet identifier 0", errMalformed)
		}
	}
	rest -= hdr
	keep := min(rest, limit)
	p.payload = make([]byte, keep)
	if _, err := io.ReadFull(r, p.payload); err != nil {
		return packet{}, unexpected(err)
	}
	if rest > keep {
		p.truncated = true
		if _, err := r.Discard(rest - keep); err != nil {
			return packet{}, unexpected(err)
		}
	}
	return p, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readLength decodes a remaining length (§2.2.3): up to four bytes.
func readLength(r io.ByteReader) (int, error) {
	n, mul := 0, 1
	for i := 0; i < 4; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, unexpected(err)
		}
		n += int(b&0x7f) * mul
		if b&0x80 == 0 {
			return n, nil
		}
		mul *= 128
	}
	return 0, fmt.Errorf("%w: remaining length longer than 4 bytes", errMalformed)
}

// appendLength encodes a remaining length.
func appendLength(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendBytes(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// frame prefixes body with a fixed header.
func frame(typ, flags byte, body []byte) ([]byte, error) {
	if len(body) > maxRemaining {
		return nil, fmt.Errorf("%s of %d bytes exceeds the MQTT maximum", typeName(typ), len(body))
	}
	b := make([]byte, 0, 5+len(body))
	b = append(b, typ<<4|flags)
	b = appendLength(b, len(body))
	return append(b, body...), nil
}

// checkString reports whether s can be an MQTT UTF-8 string (§1.5.3):
// at most 65535 bytes, valid UTF-8, no U+0000.
func checkString(what, s string) error {
	if len(s) > 65535 {
		return fmt.Errorf("%s is %d bytes long (MQTT allows 65535)", what, len(s))
	}
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s %q is not valid MQTT UTF-8", what, s)
	}
	return nil
}

// checkTopic validates a topic name for PUBLISH (no wildcards, not empty).
func checkTopic(t string) error {
	if t == "" {
		return errors.New("empty topic")
	}
	for i := 0; i < len(t); i++ {
		if t[i] == '+' || t[i] == '#' {
			return fmt.Errorf("topic %q: wildcards are not allowed in a topic name", t)
		}
	}
	return checkString("topic", t)
}

func connectPacket(o *Options, keepalive uint16) ([]byte, error) {
	if err := checkString("client id", o.ClientID); err != nil {
		return nil, err
	}
	b := appendString(nil, "MQTT")
	b = append(b, 4)      // protocol level 3.1.1
	var flags byte = 0x02 // clean session
	if w := o.Will; w != nil {
		if err := checkTopic(w.Topic); err != nil {
			return nil, fmt.Errorf("will: %w", err)
		}
		flags |= 0x04 | w.QoS<<3
		if w.Retain {
			flags |= 0x20
		}
	}
	if o.Username != "" {
		flags |= 0x80
		if o.Password != "" {
			flags |= 0x40
		}
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint16(b, keepalive)
	b = appendString(b, o.ClientID)
	if w := o.Will; w != nil {
		b = appendString(b, w.Topic)
		b = appendBytes(b, w.Payload)
	}
	if o.Username != "" {
		b = appendString(b, o.Username)
		if o.Password != "" {
			b = appendString(b, o.Password)
		}
	}
	return frame(typeConnect, 0, b)
}

func publishPacket(topic string, payload []byte, qos byte, retain bool, id uint16) ([]byte, error) {
	if err := checkTopic(topic); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 4+len(topic)+len(payload))
	b = appendString(b, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	b = append(b, payload...)
	flags := qos << 1
	if retain {
		flags |= 1
	}
	return frame(typePublish, flags, b)
}

func subscribePacket(filter string, qos byte, id uint16) ([]byte, error) {
	if filter == "" {
		return nil, errors.New("empty topic filter")
	}
	if err := checkString("topic filter", filter); err != nil {
		return nil, err
	}
	b := binary.BigEndian.AppendUint16(nil, id)
	b = appendString(b, filter)
	b = append(b, qos)
	return frame(typeSubscribe, 0x02, b)
}

func ackPacket(typ byte, id uint16) []byte {
	return []byte{typ << 4, 2, byte(id >> 8), byte(id)}
}

// connackError explains a CONNACK return code (§3.2.2.3).
func connackError(code byte) error {
	switch code {
	case 1:
		return errors.New("connection refused: unacceptable protocol version (the broker does not speak MQTT 3.1.1)")
	case 2:
		return errors.New("connection refused: client identifier rejected")
	case 3:
		return errors.New("connection refused: server unavailable")
	case 4:
		return errors.New("connection refused: bad user name or password")
	case 5:
		return errors.New("connection refused: not authorized")
	}
	return fmt.Errorf("connection refused: return code %d", code)
}

func typeName(t byte) string {
	names := [...]string{"reserved", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
		"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "reserved"}
	return names[t&0x0f]
}
