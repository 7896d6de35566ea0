package setup_test

import (
	"fmt"
	"time"

	"github.com/vigil-iot/vigil/setup"
)

// What the wizard prints for each channel after the test alert.
func ExampleDelivery_String() {
	fmt.Println(setup.Delivery{Channel: setup.ChannelTelegram, Latency: 420 * time.Millisecond})
	fmt.Println(setup.Delivery{Channel: setup.ChannelMQTT, Latency: 12 * time.Millisecond})
	fmt.Println(setup.Delivery{Channel: setup.ChannelMQTT, Err: fmt.Errorf("mqtt mqtt://10.0.0.2:1883: %w (CONNACK 5 not authorized)", setup.ErrBrokerRefused)})
	// Output:
	// telegram: delivered (0.4 s)
	// mqtt: delivered, PUBACK in 12 ms
	// mqtt: not delivered: mqtt mqtt://10.0.0.2:1883: the broker refused the user name or password (CONNACK 5 not authorized)
}
