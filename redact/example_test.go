package redact_test

import (
	"fmt"

	"github.com/vigil-iot/vigil/redact"
)

func ExampleRedactor_String() {
	r := redact.New("q7Zt9wLmN3xK2pR8vB4c") // the configured LLM key
	fmt.Println(r.String(`read_sensor {"name":"q7Zt9wLmN3xK2pR8vB4c"}`))
	fmt.Println(r.String("and a stranger's: Bearer eyJhbGciOiJIUzI1NiJ9.x.y"))
	// Output:
	// read_sensor {"name":"[redacted]"}
	// and a stranger's: Bearer [redacted]
}
