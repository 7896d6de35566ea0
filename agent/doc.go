// Package agent turns a checklist and a sensor snapshot into a Decision by
// asking an LLM (SPEC §4): OpenAI-compatible and Anthropic providers, a small
// prompt, read-only tools, heartbeat_respond, scout → escalate, and the text
// fallback for models without tool calls.
//
// Reading the code: New (think.go) builds an Agent from a Config; Think
// runs one heartbeat: the prompt (prompt.go), the provider's chat API
// (provider.go with openai.go and anthropic.go: retries, backoff, the
// answer's status), the read-only tools and what the model may change
// about its own heartbeat (tools.go, Self), and the text contract for a
// model without tool calls (text.go). Errors say what failed by their
// type: ErrUnreachable, ErrToolsUnsupported, *ProviderError; ErrorClass
// names them for the run record.
//
// The agent reads nothing and writes nothing itself: what it remembers
// (ModelMemory, Self) is given to it, and every text the model wrote is
// redacted with the Redactor it is given before it leaves the package.
// What the model or the provider sent is cut only with that Redactor's
// Clip, which redacts before it cuts (see package redact).
package agent
