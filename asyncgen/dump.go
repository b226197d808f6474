package asyncgen

// The dump: the intermediate form of one function as text, for whoever
// debugs the generator (Options.Dump, blitzgen -dump). It reads the form
// and changes nothing: types are printed with a qualifier of its own, not
// the file's, which would import what it names.
//
// The dump opens with the function, its state machine and the last pass
// that ran; then where the variables that outlive a block are kept, and
// the fields the generator adds; then each block, as a case of Poll:
//
//	b2 resumes aw1; from b1
//	  live in:  get keys d total i n
//	  golden.go:16     resume       s := aw1's value
//	  golden.go:17     statement    n, err := strconv.Atoi(s)
//	  golden.go:22     jump         -> b3
//	  live out: get keys d total i n
//
// Each item is its source position, its kind and what it does, in the
// source's names (the rewrite into fields happens at emission); -> names
// the blocks it may go on at. "live in" lists the variables some path from
// the block's start reads before writing (liveness.go), "live out" those
// live into its successors. A block no jump reaches and that holds nothing
// is marked "not emitted".

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// dumps reports whether o asks for g's function to be dumped, counting it.
func (o *run) dumps(g *gen) bool {
	if o.Dump == "" {
		return false
	}
	name := g.fn.Name.Name
	names := []string{name, name + "Async"}
	if t := recvTypeName(g.fn); t != "" {
		names = append(names, t+"."+name, t+"."+name+"Async")
	}
	if !slices.Contains(names, o.Dump) {
		return false
	}
	o.dumped++
	return true
}

// dumpTo is where the dump goes.
func (o *run) dumpTo() io.Writer {
	if o.DumpTo == nil {
		return os.Stdout
	}
	return o.DumpTo
}

// dumper prints one function's form.
type dumper struct {
	g     *gen
	w     io.Writer
	names map[*types.Var]string // how the dump names each variable
}

// dumpFunc writes the form of g's function to w, as it stands after pass
// last. Called by compileFunc.
func dumpFunc(w io.Writer, g *gen, last string) {
	d := &dumper{g: g, w: w}
	fn := g.fn
	what := "func " + fn.Name.Name
	if t := recvTypeName(fn); t != "" {
		what = "method " + t + "." + fn.Name.Name
	}
	fmt.Fprintf(w, "%s, %s: after pass %s", what, filepath.Base(g.pos(fn.Pos()).Filename), last)
	if g.typeName != "" {
		fmt.Fprintf(w, "; state machine %s, constructor %s", g.typeName, g.ctorName)
	}
	fmt.Fprintln(w)
	if len(g.errs) > 0 {
		fmt.Fprintf(w, "rejected: %d constructs\n", len(g.errs))
	}
	if g.funcIR == nil {
		fmt.Fprintln(w, "no blocks yet")
		return
	}
	d.nameVars()
	if g.kept != nil {
		d.kept()
	}
	d.fields()
	var ls *liveSets
	if len(g.errs) == 0 {
		ls = g.liveness()
	}
	preds := map[*block][]*block{}
	for _, b := range g.blocks {
		for _, it := range b.items {
			for _, s := range g.successors(it) {
				if s != nil && !slices.Contains(preds[s], b) {
					preds[s] = append(preds[s], b)
				}
			}
		}
	}
	fmt.Fprintf(w, "blocks: %d\n", len(g.blocks))
	for _, b := range g.blocks {
		d.block(b, preds[b], ls)
	}
}

// nameVars names the variables the items name: by their name, with the
// line of their declaration when two share it.
func (d *dumper) nameVars() {
	g := d.g
	var vars []*types.Var
	seen := map[*types.Var]bool{}
	note := func(v *types.Var) {
		if v != nil && !seen[v] {
			seen[v] = true
			vars = append(vars, v)
		}
	}
	for _, v := range sortedVars(g.ownParams()) {
		note(v)
	}
	for _, b := range g.blocks {
		for _, it := range b.items {
			uses, defs := g.itemEffects(it)
			for _, v := range append(uses, defs...) {
				note(v)
			}
		}
	}
	if g.kept != nil {
		for _, v := range append(slices.Clone(g.hoistList), g.pollList...) {
			note(v)
		}
	}
	count := map[string]int{}
	for _, v := range vars {
		count[v.Name()]++
	}
	d.names = map[*types.Var]string{}
	for _, v := range vars {
		d.names[v] = v.Name()
		if count[v.Name()] > 1 {
			d.names[v] = fmt.Sprintf("%s@%d", v.Name(), g.pos(v.Pos()).Line)
		}
	}
}

func (d *dumper) name(v *types.Var) string {
	if n, ok := d.names[v]; ok {
		return n
	}
	return v.Name()
}

// typ prints t without touching the file's imports.
func (d *dumper) typ(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == d.g.pkg {
			return ""
		}
		return p.Name()
	})
}

// kept lists where keep put the variables that outlive a block.
func (d *dumper) kept() {
	g := d.g
	own := g.ownParams()
	var rows [][]string
	for _, v := range g.hoistList {
		note := ""
		switch {
		case own[v] && slices.ContainsFunc(g.named, func(id *ast.Ident) bool { return g.info.Defs[id] == v }):
			note = "named result"
		case own[v]:
			note = "parameter"
		case slices.Contains(g.implicit, v):
			note = "clause variable of a type switch"
		case g.forced[v]:
			note = "forced"
		}
		typ := d.typ(v.Type())
		if g.isCell(v) {
			typ = "*" + typ
			note = strings.TrimPrefix(note+", a new variable per iteration", ", ")
		}
		rows = append(rows, []string{d.name(v), "field " + g.hoisted[v], typ, note})
	}
	for _, v := range g.pollList {
		rows = append(rows, []string{d.name(v), "local of Poll " + g.hoisted[v], d.typ(v.Type()), ""})
	}
	shared := make([]*types.Var, 0, len(g.shared))
	for v := range g.shared {
		shared = append(shared, v)
	}
	for _, v := range sortedVars(varSetOf(shared)) {
		rows = append(rows, []string{d.name(v), "field " + g.hoisted[v], d.typ(v.Type()), "awaited by value, the future's field"})
	}
	fmt.Fprintln(d.w, "kept:")
	if len(rows) == 0 {
		fmt.Fprintln(d.w, "  (none)")
	}
	d.table(rows)
}

func varSetOf(vs []*types.Var) varSet {
	s := varSet{}
	for _, v := range vs {
		s[v] = true
	}
	return s
}

// fields lists the fields the generator adds besides the kept variables.
func (d *dumper) fields() {
	g := d.g
	var rows [][]string
	for _, key := range g.awOrder {
		f := g.awFields[key]
		note := "awaited future"
		switch {
		case g.awMoved[f]:
			note = "awaited future, moved in by value"
		case g.awValue[f]:
			note = "awaited local, by value"
		}
		rows = append(rows, []string{f, g.awType[f], note})
	}
	split := func(fs []string, note string) {
		for _, f := range fs {
			name, typ, _ := strings.Cut(f, " ")
			typ, _, _ = strings.Cut(typ, " //")
			rows = append(rows, []string{name, typ, note})
		}
	}
	split(g.rangeFields, "range loop")
	if g.kept != nil {
		split(g.blankResults, "blank named result")
	}
	switch {
	case g.defers != "" && g.siteAt != nil:
		rows = append(rows, []string{g.defers, "uint8", fmt.Sprintf("open-coded defers: %d", len(g.siteList))})
	case g.defers != "":
		rows = append(rows, []string{g.defers, "[]func()", "deferred calls"})
	}
	fmt.Fprintln(d.w, "generated fields:")
	if len(rows) == 0 {
		fmt.Fprintln(d.w, "  (none)")
	}
	d.table(rows)
}

// table writes rows indented, in aligned columns.
func (d *dumper) table(rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(" " + c)
			} else {
				fmt.Fprintf(&b, " %-*s", width[i], c)
			}
		}
		fmt.Fprintln(d.w, strings.TrimRight(b.String(), " "))
	}
}

// block writes block b, which the blocks preds may go on at.
func (d *dumper) block(b *block, preds []*block, ls *liveSets) {
	g := d.g
	head := fmt.Sprintf("b%d", b.id)
	switch {
	case b.id == 0:
		head += " entry"
	case b.resume != nil:
		head += " resumes " + b.resume.field
	}
	if len(preds) > 0 {
		var ps []string
		for _, p := range preds {
			ps = append(ps, fmt.Sprintf("b%d", p.id))
		}
		head += "; from " + strings.Join(ps, " ")
	}
	if !becomesCase(b) {
		head += "; not emitted"
	}
	fmt.Fprintln(d.w, head)
	if ls != nil {
		fmt.Fprintf(d.w, "  live in: %s\n", d.vars(ls.in[b.id]))
	}
	for _, it := range b.items {
		pos := ""
		if p := itemPos(it); p.IsValid() {
			pp := g.pos(p)
			pos = fmt.Sprintf("%s:%d", filepath.Base(pp.Filename), pp.Line)
		}
		text := d.item(it)
		lines := strings.Split(text, "\n")
		fmt.Fprintf(d.w, "  %-16s %-12s %s\n", pos, itemKind(it), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(d.w, "  %-16s %-12s %s\n", "", "", strings.ReplaceAll(l, "\t", "    "))
		}
	}
	if ls != nil {
		fmt.Fprintf(d.w, "  live out: %s\n", d.vars(ls.out[b.id]))
	}
}

// vars lists s in the order of the variables' declarations.
func (d *dumper) vars(s varSet) string {
	if len(s) == 0 {
		return "-"
	}
	var out []string
	for _, v := range sortedVars(s) {
		out = append(out, d.name(v))
	}
	return strings.Join(out, " ")
}

// itemPos is the source position of an item, if it has one.
func itemPos(it any) token.Pos {
	switch it := it.(type) {
	case stmtItem:
		return it.s.Pos()
	case awaitStart:
		return it.pos
	case *awaitResume:
		return it.pos
	case branchItem:
		return it.pos
	case loopHead:
		return it.pos
	case gotoItem:
		return it.pos
	case endItem:
		return it.pos
	case switchItem:
		return it.s.Pos()
	case caseTest:
		return it.pos
	case rangeInit:
		return it.l.s.Pos()
	case rangeHead:
		return it.l.s.Pos()
	case rangeNext:
		return it.l.s.Pos()
	}
	return token.NoPos
}

// item is what item it does, in the source's names.
func (d *dumper) item(it any) string {
	g := d.g
	p := g.print
	to := func(b *block) string {
		if b == nil {
			return "nowhere"
		}
		return fmt.Sprintf("b%d", b.id)
	}
	switch it := it.(type) {
	case stmtItem:
		s := p(it.s)
		if ts := g.branchTargets(it); len(ts) > 0 {
			var bs []string
			for _, t := range ts {
				bs = append(bs, to(t))
			}
			s += "  -> " + strings.Join(bs, " ")
		}
		return s
	case awaitStart:
		return fmt.Sprintf("%s = %s  -> %s", it.field, p(it.call.Args[0]), to(it.resume))
	case *awaitResume:
		switch {
		case it.ret:
			return "return " + it.field + "'s value"
		case it.try != nil:
			return fmt.Sprintf("%s, %s %s %s's value", p(it.try.Lhs[0]), p(it.try.Lhs[1]), it.try.Tok, it.field)
		case it.lhs != nil:
			return fmt.Sprintf("%s %s %s's value", it.lhs.Name, it.op, it.field)
		}
		return it.field + "'s value dropped"
	case branchItem:
		return fmt.Sprintf("if %s  -> %s else %s", p(it.cond), to(it.then), to(it.els))
	case loopHead:
		return fmt.Sprintf("if !(%s)  -> %s", p(it.cond), to(it.exit))
	case gotoItem:
		return "-> " + to(it.to)
	case endItem:
		return "return at the end of the function"
	case switchItem:
		_, head, body := switchParts(it.s)
		if it.tag != nil {
			head = it.tag
		}
		s := "switch"
		if head != nil {
			s += " " + p(head)
		}
		var cs []string
		for i, c := range body.List {
			cc := c.(*ast.CaseClause)
			label := "default"
			if cc.List != nil {
				var es []string
				for _, e := range cc.List {
					es = append(es, p(e))
				}
				label = "case " + strings.Join(es, ", ")
			}
			cs = append(cs, label+" -> "+to(it.targets[i]))
		}
		if it.join != nil {
			cs = append(cs, "none -> "+to(it.join))
		}
		return s + ": " + strings.Join(cs, "; ")
	case caseTest:
		if it.tag != nil {
			return fmt.Sprintf("if %s == %s  -> %s", p(it.tag), p(it.expr), to(it.to))
		}
		return fmt.Sprintf("if %s  -> %s", p(it.expr), to(it.to))
	case rangeInit:
		l := it.l
		s := fmt.Sprintf("range over %s (%s)", p(l.x), l.kind)
		switch {
		case l.direct:
			s += ", in place"
		case l.rng != "":
			s += ", into " + l.rng
		default:
			s += fmt.Sprintf(", not evaluated: length %d", l.arrN)
		}
		if l.keyIdx {
			return s + "; index " + p(l.s.Key) + " = 0"
		}
		return s + "; index " + l.idx + " = 0"
	case rangeHead:
		l := it.l
		s := "if the index is past the end  -> " + to(l.exit)
		var vs []string
		if l.s.Key != nil && !l.keyIdx {
			vs = append(vs, p(l.s.Key))
		}
		if l.s.Value != nil {
			vs = append(vs, p(l.s.Value))
		}
		if len(vs) > 0 {
			s += "; " + strings.Join(vs, ", ") + " " + l.s.Tok.String() + " the index's"
		}
		return s
	case rangeNext:
		return "advance the index"
	case loopNext:
		var vs []string
		for _, v := range it.vars {
			vs = append(vs, d.name(v))
		}
		if len(vs) == 0 {
			return "next iteration"
		}
		return "next iteration of " + strings.Join(vs, ", ")
	}
	return fmt.Sprintf("%T", it)
}
