package rule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// typ is the static type of an expression node.
type typ uint8

const (
	tBool typ = iota + 1
	tNum
	tDur
)

func (t typ) String() string {
	switch t {
	case tBool:
		return "a condition"
	case tNum:
		return "a number"
	case tDur:
		return "a duration"
	}
	return "nothing"
}

// op is a node's operation; operator tokens carry one too.
type op uint8

const (
	opOr op = iota + 1
	opAnd
	opNot
	opLT
	opLE
	opGT
	opGE
	opEQ
	opNE
	opAdd
	opSub // binary minus, or unary minus as a token
	opNeg
	opNum // number literal
	opDur // duration literal
	opKey
	opDelta
	opStale
	opError
	opAbs
	opUsual   // usual(key): the value expected now
	opUnusual // unusual(key): the signed robust z-score against this hour
)

var opText = [...]string{
	opOr: "or", opAnd: "and", opNot: "not",
	opLT: "<", opLE: "<=", opGT: ">", opGE: ">=", opEQ: "==", opNE: "!=",
	opAdd: "+", opSub: "-", opNeg: "-",
	opDelta: "delta", opStale: "stale", opError: "error", opAbs: "abs",
	opUsual: "usual", opUnusual: "unusual",
}

func (o op) isCmp() bool { return o >= opLT && o <= opNE }

// node is one node of a compiled expression tree.
type node struct {
	op   op
	typ  typ
	pos  int     // byte offset of the node's first character in the source
	val  float64 // opNum: the number; opDur: nanoseconds
	name string  // opKey, opDelta, opUsual, opUnusual: "sensor.quantity"; opStale, opError: sensor
	win  time.Duration
	l, r *node // operands; unary nodes use l
}

type tkind uint8

const (
	tkEOF tkind = iota
	tkNum
	tkDur
	tkKey   // sensor.quantity
	tkIdent // a bare name: function or sensor
	tkLParen
	tkRParen
	tkComma
	tkOp
)

var twoCharOps = map[string]op{"<=": opLE, ">=": opGE, "==": opEQ, "!=": opNE, "&&": opAnd, "||": opOr}

type token struct {
	kind tkind
	op   op // tkOp
	pos  int
	text string
	val  float64 // tkNum; tkDur in nanoseconds
	bad  string  // tkIdent: why it is no value ("1wire" names a sensor but is no duration)
}

// parser is a recursive-descent parser with a one-token lookahead that lexes
// on demand, so the leftmost problem is the one reported.
type parser struct {
	src      string
	off      int // lexer position
	tok      token
	depth    int
	maxDepth int
}

// bailout carries a *SyntaxError up the parser's stack to parse.
type bailout struct{ err *SyntaxError }

// parse compiles src with the given limits (the fuzz round trip lifts them).
func parse(src string, maxLen, maxDepth int) (e *Expr, err error) {
	if strings.TrimSpace(src) == "" {
		return nil, &SyntaxError{Col: 1, Msg: "empty expression"}
	}
	if len(src) > maxLen {
		return nil, &SyntaxError{Col: 1, Msg: fmt.Sprintf("expression is %d bytes, longer than the limit of %d", len(src), maxLen)}
	}
	p := &parser{src: src, maxDepth: maxDepth}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			e, err = nil, b.err
		}
	}()
	p.next()
	root := p.parseOr()
	switch p.tok.kind {
	case tkEOF:
	case tkOp:
		if p.tok.op.isCmp() {
			p.fail(p.tok.pos, "comparisons cannot be chained; join them with and")
		}
		p.fail(p.tok.pos, "unexpected %q", p.tok.text)
	case tkRParen, tkComma:
		p.fail(p.tok.pos, "unexpected %q", p.tok.text)
	default:
		p.fail(p.tok.pos, "unexpected %q; join conditions with and/or", p.tok.text)
	}
	p.wantCondition(root)
	return newExpr(src, root), nil
}

func (p *parser) col(pos int) int { return utf8.RuneCountInString(p.src[:pos]) + 1 }

func (p *parser) fail(pos int, format string, args ...any) {
	panic(bailout{&SyntaxError{Col: p.col(pos), Msg: fmt.Sprintf(format, args...)}})
}

// ---- lexer ----

func (p *parser) next() {
	src, i := p.src, p.off
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	t := token{pos: i}
	if i >= len(src) {
		p.off, p.tok = i, t
		return
	}
	n := 1
	two := src[i:min(i+2, len(src))]
	switch c := src[i]; {
	case c == '(':
		t.kind = tkLParen
	case c == ')':
		t.kind = tkRParen
	case c == ',':
		t.kind = tkComma
	case c == '+':
		t.kind, t.op = tkOp, opAdd
	case c == '-':
		t.kind, t.op = tkOp, opSub
	case two == "<=", two == ">=", two == "==", two == "!=", two == "&&", two == "||":
		n = 2
		t.kind, t.op = tkOp, twoCharOps[two]
	case c == '<':
		t.kind, t.op = tkOp, opLT
	case c == '>':
		t.kind, t.op = tkOp, opGT
	case c == '!':
		t.kind, t.op = tkOp, opNot
	case c == '=':
		p.fail(i, `unexpected "="; compare with ==`)
	case c == '&':
		p.fail(i, `unexpected "&"; use and`)
	case c == '|':
		p.fail(i, `unexpected "|"; use or`)
	default:
		n = wordLen(src[i:])
		if n == 0 {
			r, size := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && size <= 1 {
				p.fail(i, "unexpected byte %#02x", src[i])
			}
			p.fail(i, "unexpected %q", src[i:i+size])
		}
		p.word(&t, src[i:i+n])
	}
	if t.text == "" {
		t.text = src[i : i+n]
	}
	p.off, p.tok = i+n, t
}

// wordLen returns the length of the run of name, number and duration
// characters at the start of s.
func wordLen(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
			i++
		case strings.HasPrefix(s[i:], "µ"), strings.HasPrefix(s[i:], "μ"): // micro sign, Greek mu
			i += 2
		default:
			return i
		}
	}
	return i
}

// word classifies a word: keyword, number, duration, key or bare name.
func (p *parser) word(t *token, w string) {
	t.text = w
	switch w {
	case "and":
		t.kind, t.op = tkOp, opAnd
		return
	case "or":
		t.kind, t.op = tkOp, opOr
		return
	case "not":
		t.kind, t.op = tkOp, opNot
		return
	}
	if c := w[0]; c >= '0' && c <= '9' || c == '.' {
		if isNumber(w) {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil {
				p.fail(t.pos, "number out of range")
			}
			t.kind, t.val = tkNum, v
			return
		}
		if d, err := time.ParseDuration(w); err == nil {
			t.kind, t.val = tkDur, float64(d)
			return
		}
	}
	digit := w[0] >= '0' && w[0] <= '9' || w[0] == '.'
	bad := fmt.Sprintf("invalid number %q", w)
	if strings.ContainsFunc(w, func(r rune) bool { return r != '.' && r != '_' && (r < '0' || r > '9') }) {
		bad = fmt.Sprintf("invalid duration %q; use a Go duration such as 90s, 10m or 1h30m", w)
	}
	switch {
	case isKey(w):
		t.kind = tkKey
	case isIdent(w):
		t.kind = tkIdent
		if digit {
			t.bad = bad
		}
	case digit:
		p.fail(t.pos, "%s", bad)
	case strings.ToLower(w) != w:
		p.fail(t.pos, "unexpected %q; keywords and names are lowercase", w)
	default:
		p.fail(t.pos, "invalid key %q; want sensor.quantity", w)
	}
}

func isNumber(w string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func isIdent(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func isKey(w string) bool {
	s, q, ok := strings.Cut(w, ".")
	return ok && isIdent(s) && isIdent(q)
}

// ---- parser ----

func (p *parser) is(o op) bool { return p.tok.kind == tkOp && p.tok.op == o }

func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > p.maxDepth {
		p.fail(pos, "expression nested deeper than %d levels", p.maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// or = and { "or" and }
func (p *parser) parseOr() *node {
	l := p.parseAnd()
	for p.is(opOr) {
		pos := p.tok.pos
		p.next()
		r := p.parseAnd()
		l = p.logical(opOr, pos, l, r)
	}
	return l
}

// and = not { "and" not }
func (p *parser) parseAnd() *node {
	l := p.parseNot()
	for p.is(opAnd) {
		pos := p.tok.pos
		p.next()
		r := p.parseNot()
		l = p.logical(opAnd, pos, l, r)
	}
	return l
}

func (p *parser) logical(o op, pos int, l, r *node) *node {
	p.wantCondition(l)
	p.wantCondition(r)
	return &node{op: o, typ: tBool, pos: l.pos, l: l, r: r}
}

// wantCondition reports a number or duration used where a condition belongs.
func (p *parser) wantCondition(n *node) {
	switch n.typ {
	case tNum:
		p.fail(n.pos, "expected a condition, found a number; compare it, as in air.temperature > 30")
	case tDur:
		p.fail(n.pos, "expected a condition, found a duration; compare it, as in stale(air) > 5m")
	}
}

// not = "not" not | cmp
func (p *parser) parseNot() *node {
	if !p.is(opNot) {
		return p.parseCmp()
	}
	pos := p.tok.pos
	p.enter(pos)
	p.next()
	x := p.parseNot()
	p.wantCondition(x)
	p.leave()
	return &node{op: opNot, typ: tBool, pos: pos, l: x}
}

// cmp = sum [ cmpop sum ]
func (p *parser) parseCmp() *node {
	l := p.parseSum()
	if p.tok.kind != tkOp || !p.tok.op.isCmp() {
		return l
	}
	o, pos, text := p.tok.op, p.tok.pos, p.tok.text
	p.next()
	r := p.parseSum()
	for _, n := range []*node{l, r} {
		if n.typ != tBool {
			continue
		}
		if n.op == opError {
			p.fail(n.pos, "error(%s) is a condition, not a number; use error(%s) or not error(%s)", n.name, n.name, n.name)
		}
		p.fail(pos, "cannot compare conditions with %s; combine them with and, or, not", text)
	}
	if l.typ != r.typ {
		msg := fmt.Sprintf("cannot compare %s with %s", l.typ, r.typ)
		if lit := numLiteral(l, r); lit != nil {
			v := formatNum(lit.val)
			msg += fmt.Sprintf("; give %s a unit, as in %ss or %sm", v, v, v)
		}
		p.fail(pos, "%s", msg)
	}
	return &node{op: o, typ: tBool, pos: l.pos, l: l, r: r}
}

// numLiteral returns whichever of a, b is a number literal.
func numLiteral(a, b *node) *node {
	for _, n := range []*node{a, b} {
		if n.op == opNum {
			return n
		}
	}
	return nil
}

// sum = unary { ("+" | "-") unary }
func (p *parser) parseSum() *node {
	l := p.parseUnary()
	for p.is(opAdd) || p.is(opSub) {
		o, pos := p.tok.op, p.tok.pos
		p.next()
		r := p.parseUnary()
		verb := "add"
		if o == opSub {
			verb = "subtract"
		}
		switch {
		case l.typ == tBool || r.typ == tBool:
			p.fail(pos, "cannot %s conditions", verb)
		case l.typ != r.typ:
			p.fail(pos, "cannot %s %s and %s", verb, l.typ, r.typ)
		}
		l = &node{op: o, typ: l.typ, pos: l.pos, l: l, r: r}
	}
	return l
}

// unary = "-" unary | primary
func (p *parser) parseUnary() *node {
	if !p.is(opSub) {
		return p.parsePrimary()
	}
	pos := p.tok.pos
	p.enter(pos)
	p.next()
	x := p.parseUnary()
	p.leave()
	switch x.op {
	case opNum, opDur: // fold: -5 is a literal
		return &node{op: x.op, typ: x.typ, pos: pos, val: -x.val}
	}
	if x.typ == tBool {
		p.fail(pos, "cannot negate a condition; use not")
	}
	return &node{op: opNeg, typ: x.typ, pos: pos, l: x}
}

// primary = number | duration | key | call | "(" expr ")"
func (p *parser) parsePrimary() *node {
	t := p.tok
	switch t.kind {
	case tkNum:
		p.next()
		return &node{op: opNum, typ: tNum, pos: t.pos, val: t.val}
	case tkDur:
		p.next()
		return &node{op: opDur, typ: tDur, pos: t.pos, val: t.val}
	case tkKey:
		p.next()
		return &node{op: opKey, typ: tNum, pos: t.pos, name: t.text}
	case tkIdent:
		p.next()
		if p.tok.kind != tkLParen {
			if f, ok := funcs[t.text]; ok {
				p.fail(t.pos, "%s needs its arguments in parentheses: %s", t.text, f.usage)
			}
			if t.bad != "" {
				p.fail(t.pos, "%s", t.bad)
			}
			p.fail(t.pos, "expected a sensor.quantity key, got %q", t.text)
		}
		return p.parseCall(t)
	case tkLParen:
		p.enter(t.pos)
		p.next()
		x := p.parseOr()
		p.closeParen(t.pos)
		p.leave()
		return x
	case tkEOF:
		p.fail(t.pos, "unterminated expression")
	}
	p.fail(t.pos, "unexpected %q", t.text)
	return nil
}

func (p *parser) closeParen(open int) {
	switch p.tok.kind {
	case tkRParen:
		p.next()
	case tkEOF:
		p.fail(p.tok.pos, `unterminated expression: missing ")" for "(" at column %d`, p.col(open))
	default:
		p.fail(p.tok.pos, `unexpected %q; want ")"`, p.tok.text)
	}
}

var funcs = map[string]struct {
	op    op
	usage string
}{
	"delta":   {opDelta, "delta(air.temperature, 10m)"},
	"stale":   {opStale, "stale(air)"},
	"error":   {opError, "error(air)"},
	"abs":     {opAbs, "abs(air.temperature - 20)"},
	"usual":   {opUsual, "usual(air.temperature)"},
	"unusual": {opUnusual, "unusual(air.temperature)"},
}

// call = name "(" args ")"; p.tok is the "(".
func (p *parser) parseCall(name token) *node {
	f, ok := funcs[name.text]
	if !ok {
		p.fail(name.pos, "unknown function %q (have abs, delta, error, stale, unusual, usual)", name.text)
	}
	open := p.tok.pos
	p.enter(open)
	p.next()
	n := &node{op: f.op, pos: name.pos}
	switch f.op {
	case opDelta:
		n.typ = tNum
		if p.tok.kind != tkKey {
			p.failArg("expected a sensor.quantity key, as in " + f.usage)
		}
		n.name = p.tok.text
		p.next()
		if p.tok.kind != tkComma {
			p.failArg(`expected "," and a window, as in ` + f.usage)
		}
		p.next()
		if p.tok.kind != tkDur {
			p.failArg("expected a window duration, as in " + f.usage)
		}
		if p.tok.val <= 0 {
			p.fail(p.tok.pos, "delta window must be positive")
		}
		n.win = time.Duration(p.tok.val)
		p.next()
	case opUsual, opUnusual:
		n.typ = tNum
		if p.tok.kind != tkKey {
			p.failArg("expected a sensor.quantity key, as in " + f.usage)
		}
		n.name = p.tok.text
		p.next()
	case opStale, opError:
		n.typ = tBool
		if f.op == opStale {
			n.typ = tDur
		}
		switch p.tok.kind {
		case tkIdent, tkNum, tkDur: // sensor names may start with a digit
			if !isIdent(p.tok.text) {
				p.failArg("expected a sensor name, as in " + f.usage)
			}
			n.name = p.tok.text
			p.next()
		case tkKey:
			s, _, _ := strings.Cut(p.tok.text, ".")
			p.fail(p.tok.pos, "%s takes a sensor name, not a reading: %s(%s)", name.text, name.text, s)
		default:
			p.failArg("expected a sensor name, as in " + f.usage)
		}
	case opAbs:
		x := p.parseOr()
		if x.typ == tBool {
			p.fail(x.pos, "abs takes a number or a duration, not a condition")
		}
		n.typ, n.l = x.typ, x
	}
	p.closeParen(open)
	p.leave()
	return n
}

// failArg reports a bad function argument at the current token.
func (p *parser) failArg(msg string) {
	if p.tok.kind == tkEOF {
		p.fail(p.tok.pos, "unterminated expression: %s", msg)
	}
	p.fail(p.tok.pos, "%s", msg)
}
