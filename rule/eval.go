package rule

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// evalBool evaluates a condition in Kleene's three-valued logic: ok is false
// when the value is unknown, and then v is false.
func evalBool(n *node, env Env) (v, ok bool) {
	switch n.op {
	case opOr: // true if either side is true, even if the other is unknown
		l, lok := evalBool(n.l, env)
		if lok && l {
			return true, true
		}
		r, rok := evalBool(n.r, env)
		if rok && r {
			return true, true
		}
		return false, lok && rok
	case opAnd: // false if either side is false, even if the other is unknown
		l, lok := evalBool(n.l, env)
		if lok && !l {
			return false, true
		}
		r, rok := evalBool(n.r, env)
		if rok && !r {
			return false, true
		}
		return lok && rok, lok && rok
	case opNot:
		v, ok := evalBool(n.l, env)
		return ok && !v, ok
	case opError:
		return env.Failed(n.name), true
	case opLT, opLE, opGT, opGE, opEQ, opNE:
		l, ok := evalNum(n.l, env)
		if !ok {
			return false, false
		}
		r, ok := evalNum(n.r, env)
		if !ok {
			return false, false
		}
		switch n.op {
		case opLT:
			return l < r, true
		case opLE:
			return l <= r, true
		case opGT:
			return l > r, true
		case opGE:
			return l >= r, true
		case opEQ:
			return l == r, true
		default:
			return l != r, true
		}
	}
	return false, false
}

// evalNum evaluates a number or a duration (in nanoseconds). A missing
// reading, or a NaN anywhere, is unknown.
func evalNum(n *node, env Env) (float64, bool) {
	var v float64
	switch n.op {
	case opNum, opDur:
		return n.val, true
	case opKey:
		x, ok := env.Value(n.name)
		if !ok {
			return 0, false
		}
		v = x
	case opDelta:
		x, ok := env.Delta(n.name, n.win)
		if !ok {
			return 0, false
		}
		v = x
	case opStale:
		return float64(env.Stale(n.name)), true
	case opUsual, opUnusual:
		b, ok := env.(Baselines)
		if !ok {
			return 0, false
		}
		get := b.Usual
		if n.op == opUnusual {
			get = b.Unusual
		}
		x, ok := get(n.name)
		if !ok {
			return 0, false // warming up
		}
		v = x
	case opAbs, opNeg:
		x, ok := evalNum(n.l, env)
		if !ok {
			return 0, false
		}
		if n.op == opNeg {
			return -x, true
		}
		return math.Abs(x), true
	case opAdd, opSub:
		l, ok := evalNum(n.l, env)
		if !ok {
			return 0, false
		}
		r, ok := evalNum(n.r, env)
		if !ok {
			return 0, false
		}
		if n.op == opAdd {
			v = l + r
		} else {
			v = l - r
		}
	default:
		return 0, false
	}
	if math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// Precedence levels for printing, low to high.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precSum
	precUnary
	precPrimary
)

func prec(n *node) int {
	switch {
	case n.op == opOr:
		return precOr
	case n.op == opAnd:
		return precAnd
	case n.op == opNot:
		return precNot
	case n.op.isCmp():
		return precCmp
	case n.op == opAdd || n.op == opSub:
		return precSum
	case n.op == opNeg, (n.op == opNum || n.op == opDur) && n.val < 0:
		return precUnary
	}
	return precPrimary
}

// format writes n in canonical form with only the parentheses precedence needs.
func format(b *strings.Builder, n *node, minPrec int) {
	if prec(n) < minPrec {
		b.WriteByte('(')
		defer b.WriteByte(')')
	}
	switch n.op {
	case opOr, opAnd, opAdd, opSub:
		p := prec(n)
		format(b, n.l, p)
		b.WriteString(" " + opText[n.op] + " ")
		format(b, n.r, p+1) // left-associative
	case opLT, opLE, opGT, opGE, opEQ, opNE:
		format(b, n.l, precSum)
		b.WriteString(" " + opText[n.op] + " ")
		format(b, n.r, precSum)
	case opNot:
		b.WriteString("not ")
		format(b, n.l, precNot)
	case opNeg:
		b.WriteString("-")
		format(b, n.l, precUnary)
	default:
		b.WriteString(leaf(n))
	}
}

// leaf formats a node that has no operands, or a call.
func leaf(n *node) string {
	switch n.op {
	case opNum:
		return formatNum(n.val)
	case opDur:
		return time.Duration(n.val).String()
	case opKey:
		return n.name
	case opDelta:
		return "delta(" + n.name + ", " + n.win.String() + ")"
	case opStale, opError, opUsual, opUnusual:
		return opText[n.op] + "(" + n.name + ")"
	case opAbs:
		var b strings.Builder
		b.WriteString("abs(")
		format(&b, n.l, precOr)
		b.WriteString(")")
		return b.String()
	}
	return "?"
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// describeValue formats a value for Describe: numbers to four decimals,
// durations to the second (or millisecond below a second).
func describeValue(n *node, v float64) string {
	if n.typ == tDur {
		d := time.Duration(v)
		if d > time.Second || d < -time.Second {
			return d.Round(time.Second).String()
		}
		return d.Round(time.Millisecond).String()
	}
	if r := math.Round(v*1e4) / 1e4; !math.IsInf(r, 0) && !math.IsNaN(r) {
		v = r
	}
	return formatNum(v)
}
