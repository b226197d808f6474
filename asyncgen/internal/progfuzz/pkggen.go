package progfuzz

import (
	"fmt"
	"strings"
)

// The statements of the programs that use the module's other packages
// (pkgtemplates.go): variables of their types kept across awaits, their
// functions and methods called, promoted fields and methods of embedded
// types, generic types instantiated with this package's and the other
// packages' types, and awaits of lib's async functions.

// DotImportBug, when set, keeps programs from importing packages with a
// dot: the generator once printed the type of a kept variable of a
// dot-imported package as "..Name" (testdata/corpus/dotimportkept.go),
// and of two dot imports the generated file imported one
// (testdata/corpus/twodotimports.go).
var DotImportBug = false

// choosePkgNames chooses the names the program imports the other
// packages under: a/util and b/util are both named util, as text/template
// and html/template are both named template, so one of each pair (or
// both) is imported under another name, sometimes one that looks like the
// other package's (the name the generator makes from a path); b/util and
// one of the template packages are sometimes imported with a dot.
func (g *gen) choosePkgNames() {
	g.names = map[string]string{}
	g.used = map[string]bool{}
	for k, n := range pkgName {
		g.names[k] = n
	}
	if g.chance(0.2) {
		g.names["lib"] = "blib"
	}
	utilAliases := []string{"util2", "autil", "butil", "u"}
	pair := func(a, b string, aliases []string) {
		switch g.rng.IntN(5) {
		case 0, 1:
			g.names[a] = aliases[g.rng.IntN(len(aliases))]
		case 2, 3:
			g.names[b] = aliases[g.rng.IntN(len(aliases))]
		default:
			i := g.rng.IntN(len(aliases))
			g.names[a], g.names[b] = aliases[i], aliases[(i+1)%len(aliases)]
		}
	}
	pair("au", "bu", utilAliases)
	pair("tt", "ht", []string{"htmltemplate", "texttemplate", "tmpl", "template2"})
	if DotImportBug {
		return
	}
	// Dot imports: b/util, and one of the template packages (whose names
	// clash with each other's, not with b/util's nor with the programs'
	// package).
	if g.chance(0.1) {
		g.names["bu"] = "."
	}
	if g.chance(0.1) {
		g.names[[]string{"tt", "ht"}[g.rng.IntN(2)]] = "."
	}
}

// q returns the qualifier of the package key ("lib." or "" for a dot
// import) and marks it imported.
func (g *gen) q(key string) string {
	if key == "lib" && g.inLib {
		return ""
	}
	g.used[key] = true
	if g.names[key] == "." {
		return ""
	}
	return g.names[key] + "."
}

// importSpecs returns the import specs of the packages the program
// names, one a line.
func (g *gen) importSpecs() string {
	var b strings.Builder
	for _, k := range importKeys {
		if !g.used[k] || (k == "lib" && g.inLib) {
			continue
		}
		if n := g.names[k]; n != pkgName[k] {
			fmt.Fprintf(&b, "%s %q\n", n, importPaths[k])
		} else {
			fmt.Fprintf(&b, "%q\n", importPaths[k])
		}
	}
	return b.String()
}

// shadowablePkg returns the name of an imported package that a local may
// take in the innermost scope, or "".
func (g *gen) shadowablePkg() string {
	var names []string
	for _, k := range importKeys {
		if n := g.names[k]; g.used[k] && n != "." && !g.inScope(n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return names[g.rng.IntN(len(names))]
}

// elemType is a type argument of lib's generic types: a type, an
// expression of it, and an expression of it that awaits.
type elemType struct {
	typ   func(g *gen) string
	expr  func(g *gen) string
	await func(g *gen) string
}

var elemTypes = []elemType{
	{
		func(g *gen) string { return "int" },
		func(g *gen) string { return g.small() },
		func(g *gen) string { return g.await() },
	},
	{
		func(g *gen) string { return "string" },
		func(g *gen) string { return g.strExpr() },
		func(g *gen) string { g.awaits++; return fmt.Sprintf("future.Await(e.Str(%s))", g.strExpr()) },
	},
	{
		func(g *gen) string { return g.q("lib") + "Score" },
		func(g *gen) string { return fmt.Sprintf("%sScore(%s)", g.q("lib"), g.small()) },
		func(g *gen) string {
			g.awaits++
			return fmt.Sprintf("future.Await(%sTwiceAsync(e, %sScore(%s)))", g.q("lib"), g.q("lib"), g.small())
		},
	},
	{
		func(g *gen) string { return g.q("au") + "ID" },
		func(g *gen) string { return fmt.Sprintf("%sID(%s)", g.q("au"), g.small()) },
		func(g *gen) string { return fmt.Sprintf("%sID(%s)", g.q("au"), g.await()) },
	},
	{
		func(g *gen) string { return g.q("bu") + "Name" },
		func(g *gen) string { return fmt.Sprintf("%sName(%s)", g.q("bu"), g.strExpr()) },
		func(g *gen) string {
			g.awaits++
			return fmt.Sprintf("%sName(future.Await(e.Str(%s)))", g.q("bu"), g.strExpr())
		},
	},
}

// elemExpr is an expression of type argument i, awaiting if it may.
func (g *gen) elemExpr(i int) string {
	if g.awaitOK() && g.chance(0.5) {
		return elemTypes[i].await(g)
	}
	return elemTypes[i].expr(g)
}

// show returns the format and the arguments with which note records a
// variable of another package's type (never a pointer's address).
func (g *gen) show(v *variable) (format, args string) {
	n := v.name
	switch v.kind {
	case kAcc, kStack, kABag, kBBag:
		return "%v", n
	case kScore, kID:
		return "%d", n
	case kName:
		return "%q", n
	case kShape:
		return "area=%d", n + ".Area()"
	case kTally:
		return "N=%d tag=%q len=%d total=%d", fmt.Sprintf("%s.N, %s.Tag, %s.Len(), %s.Total()", n, n, n, n)
	case kWrap:
		return "N=%d tag=%q get=%q own=%d k=%d items=%v", fmt.Sprintf("%s.N, %s.Tag, %s.Get(), %s.Own, %s.K, %s.Items", n, n, n, n, n, n)
	case kLabeled:
		return "area=%d", n + ".Area()"
	case kCell:
		return "get=%v sets=%d", fmt.Sprintf("%s.Get(), %s.Sets()", n, n)
	case kPair:
		return "%s", n + ".String()"
	case kTT, kHT:
		x := g.strExpr()
		if g.chance(0.5) {
			x = g.intExpr(1)
		}
		return "%q", fmt.Sprintf("%sRender(%s, %s)", g.q("lib"), n, x)
	}
	panic(fmt.Sprint("show: kind ", v.kind))
}

// pkgKinds are the kinds pkgStmt chooses from, the embedding structs
// more often.
var pkgKinds = []kind{kAcc, kAcc, kScore, kShape, kTally, kTally, kWrap, kWrap, kWrap, kLabeled, kCell, kCell, kPair, kStack, kABag, kBBag, kID, kName, kTT, kHT}

// pkgStmt declares a variable of another package's type or uses one.
func (g *gen) pkgStmt() {
	k := pkgKinds[g.rng.IntN(len(pkgKinds))]
	if k == kWrap && g.inLib {
		k = kTally
	}
	v := g.pick(k, true)
	if v == nil || g.chance(0.2) {
		g.declPkg(k)
		return
	}
	g.pkgOp(v)
}

var tmplLits = []string{`"[{{.}}]"`, `"<b>{{.}}</b>"`, `"{{printf \"%v|%q\" . .}}"`, `"<a title={{.}}>x</a>"`}

// declPkg declares a variable of kind k.
func (g *gen) declPkg(k kind) {
	name := g.newName(k)
	v := &variable{kind: k, loops: g.loops}
	switch k {
	case kAcc:
		switch g.rng.IntN(4) {
		case 0:
			g.emit("var %s %sAcc", name, g.q("lib"))
		case 1:
			x := g.small()
			if g.awaitOK() {
				x = g.awaitExpr(1)
			}
			g.emit("%s := %sAcc{N: %s}", name, g.q("lib"), x)
		case 2:
			if o := g.pick(kAcc, false); o != nil {
				// A copy: the two do not share.
				g.emit("%s := %s", name, o.name)
				break
			}
			fallthrough
		default:
			g.emit("%s := %sNewAcc(%s)", name, g.q("lib"), g.small())
		}
	case kScore:
		switch {
		case g.awaitOK():
			g.awaits++
			g.emit("%s := future.Await(%sTwiceAsync(e, %sScore(%s)))", name, g.q("lib"), g.q("lib"), g.small())
		case g.chance(0.3):
			g.emit("var %s %sScore", name, g.q("lib"))
		default:
			g.emit("%s := %sScore(%s)", name, g.q("lib"), g.small())
		}
	case kShape:
		if g.chance(0.5) {
			g.emit("var %s %sShape = %sSquare((%s) %% 10)", name, g.q("lib"), g.q("lib"), g.small())
		} else {
			g.emit("%s := %sShape(&%sRect{W: %s, H: %s})", name, g.q("lib"), g.q("lib"), g.small(), g.small())
		}
	case kTally:
		g.emit("%s := %sNewTally(%s, %s)", name, g.q("lib"), g.small(), strLits[g.rng.IntN(len(strLits))])
	case kWrap:
		if o := g.pick(kWrap, false); o != nil && g.chance(0.3) {
			// A copy: it shares the *Meta and the *Cell.
			g.emit("%s := %s", name, o.name)
			break
		}
		x := g.small()
		if g.awaitOK() {
			x = g.awaitExpr(1)
		}
		g.emit("%s := NewWrapped(%s, %s)", name, x, strLits[g.rng.IntN(len(strLits))])
	case kLabeled:
		t := g.pick(kTally, true)
		if t == nil {
			t = g.pick(kWrap, true)
		}
		if t == nil {
			g.declPkg(kTally)
			return
		}
		if g.chance(0.5) {
			// The value, copied (its *Meta shared).
			g.emit("var %s %sLabeled = %s", name, g.q("lib"), t.name)
		} else {
			// The variable's address, kept across awaits.
			g.emit("%s := %sLabeled(&%s)", name, g.q("lib"), t.name)
		}
	case kCell:
		v.elem = g.rng.IntN(len(elemTypes))
		switch g.rng.IntN(3) {
		case 0:
			g.emit("%s := %sNewCell(%s)", name, g.q("lib"), g.elemExpr(v.elem))
		case 1:
			g.emit("%s := %sNewCell[%s](%s)", name, g.q("lib"), elemTypes[v.elem].typ(g), g.elemExpr(v.elem))
		default:
			g.emit("%s := &%sCell[%s]{}", name, g.q("lib"), elemTypes[v.elem].typ(g))
		}
	case kPair:
		v.key, v.elem = []int{0, 1, 3, 4}[g.rng.IntN(4)], g.rng.IntN(len(elemTypes))
		switch g.rng.IntN(3) {
		case 0:
			g.emit("%s := %sMakePair(%s, %s)", name, g.q("lib"), elemTypes[v.key].expr(g), g.elemExpr(v.elem))
		case 1:
			g.emit("var %s %sPair[%s, %s]", name, g.q("lib"), elemTypes[v.key].typ(g), elemTypes[v.elem].typ(g))
		default:
			g.emit("%s := %sPair[%s, %s]{Key: %s, Val: %s}", name, g.q("lib"), elemTypes[v.key].typ(g), elemTypes[v.elem].typ(g),
				elemTypes[v.key].expr(g), g.elemExpr(v.elem))
		}
	case kStack:
		v.elem = g.rng.IntN(len(elemTypes))
		if g.chance(0.5) {
			g.emit("var %s %sStack[%s]", name, g.q("lib"), elemTypes[v.elem].typ(g))
		} else {
			t := elemTypes[v.elem].typ(g)
			g.emit("%s := %sStack[%s]{Items: []%s{%s}}", name, g.q("lib"), t, t, elemTypes[v.elem].expr(g))
		}
	case kABag:
		if g.chance(0.5) {
			g.emit("var %s %sBag", name, g.q("au"))
		} else {
			g.emit("%s := %sBag{Items: []int{%s}}", name, g.q("au"), g.small())
		}
	case kBBag:
		if g.chance(0.5) {
			g.emit("var %s %sBag", name, g.q("bu"))
		} else {
			g.emit("%s := %sBag{Names: []string{%s}}", name, g.q("bu"), g.strExpr())
		}
	case kID:
		if g.awaitOK() {
			g.emit("%s := %sID(%s)", name, g.q("au"), g.await())
		} else {
			g.emit("%s := %sID(%s)", name, g.q("au"), g.small())
		}
	case kName:
		g.emit("%s := %s", name, g.elemExpr(4))
	case kTT, kHT:
		pk := map[kind]string{kTT: "tt", kHT: "ht"}[k]
		g.emit("%s := %sMust(%sNew(%q).Parse(%s))", name, g.q(pk), g.q(pk), name, tmplLits[g.rng.IntN(len(tmplLits))])
	}
	v.name = name
	s := g.scopes[len(g.scopes)-1]
	s.vars = append(s.vars, v)
	g.note(v)
}

// pkgOp uses v, a variable of another package's type: changes it, calls
// its methods (promoted ones too), awaits its async methods, defers its
// methods, takes method values and addresses of its fields.
func (g *gen) pkgOp(v *variable) {
	n := v.name
	id := g.id()
	// awaitInto writes k := <an await of v's async method>, the whole
	// right-hand side: the method changes v, so no other operand may
	// read it.
	awaitInto := func(call string) bool {
		if !g.awaitOK() {
			return false
		}
		g.awaits++
		k := g.newName(kInt)
		g.emit("%s := future.Await(%s)", k, call)
		g.note(g.declare(k, kInt))
		return true
	}
	switch v.kind {
	case kAcc:
		switch g.rng.IntN(7) {
		case 0:
			x := g.small()
			if g.awaitOK() {
				x = g.await()
			}
			g.emit("e.Note(\"s%d %s.Add=%%d\", %s.Add(%s))", id, n, n, x)
		case 1:
			if g.awaitOK() {
				g.emit("%s.N = %s", n, g.awaitExpr(1))
			} else {
				g.emit("%s.N += %s", n, g.small())
			}
		case 2:
			if awaitInto(fmt.Sprintf("%s.FoldAsync(e, %s)", n, g.small())) {
				return
			}
			g.emit("e.Note(\"s%d %s.Sum=%%d\", %s.Sum())", id, n, n)
		case 3:
			g.emit("defer %s.Report(e)", n)
			return
		case 4:
			// A method value binds the variable's address.
			fn := g.newName(kFunc)
			g.emit("%s := %s.Add", fn, n)
			g.note(g.declare(fn, kFunc))
			return
		case 5:
			p := g.newName(kPtr)
			g.emit("%s := &%s.N", p, n)
			g.declare(p, kPtr)
			g.emit("e.Note(\"s%d *%s=%%d\", *%s)", g.id(), p, p)
			return
		default:
			g.emit("%s.Report(e)", n)
		}
	case kScore:
		switch g.rng.IntN(4) {
		case 0:
			g.emit("%s = %s.Double()", n, n)
		case 1:
			g.emit("%s += %sScore(%s)", n, g.q("lib"), g.small())
		case 2:
			if g.awaitOK() {
				g.awaits++
				g.emit("%s = future.Await(%sTwiceAsync(e, %s))", n, g.q("lib"), n)
				break
			}
			fallthrough
		default:
			x := g.newName(kInt)
			g.emit("%s := int(%s) %% 97", x, n)
			g.note(g.declare(x, kInt))
			return
		}
	case kShape:
		switch g.rng.IntN(4) {
		case 0:
			r := fmt.Sprintf("r%d", id)
			g.emit("if %s, ok := %s.(*%sRect); ok {", r, n, g.q("lib"))
			g.emit("\t%s.W = %s", r, g.small())
			g.emit("}")
		case 1:
			sv := fmt.Sprintf("sv%d", id)
			g.emit("switch %s := %s.(type) {", sv, n)
			g.emit("case %sSquare:", g.q("lib"))
			g.emit("\te.Note(\"s%d square %%d\", int(%s))", id, sv)
			g.emit("case *%sRect:", g.q("lib"))
			g.emit("\te.Note(\"s%d rect %%d %%d\", %s.W, %s.H)", id, sv, sv)
			g.emit("}")
		case 2:
			x := g.small()
			if g.awaitOK() {
				x = g.awaitExpr(1)
			}
			g.emit("%s = %sSquare((%s) %% 10)", n, g.q("lib"), x)
		default:
			g.emit("%s = &%sRect{W: %s, H: 2}", n, g.q("lib"), g.small())
		}
	case kTally, kWrap:
		switch g.rng.IntN(14) {
		case 12, 13:
			// A copy of an embedded field, or the pointer one holds: a
			// variable whose type's package the file may not import
			// (a/util's Bag, under a name another import may take).
			emb := []struct {
				field string
				k     kind
			}{{"Acc", kAcc}, {"Bag", kABag}, {"Shape", kShape}, {"Tally", kTally}, {"Cell", kCell}}
			i := g.rng.IntN(len(emb))
			if v.kind == kTally && i >= 3 {
				i = g.rng.IntN(3)
			}
			x := &variable{name: g.newName(emb[i].k), kind: emb[i].k, loops: g.loops, elem: 1}
			g.emit("%s := %s.%s", x.name, n, emb[i].field)
			s := g.scopes[len(g.scopes)-1]
			s.vars = append(s.vars, x)
			g.note(x)
		case 0:
			g.emit("%s.N += %s", n, g.small())
		case 1:
			// A promoted pointer method of a struct embedded by value.
			x := g.small()
			if g.awaitOK() {
				x = g.await()
			}
			g.emit("e.Note(\"s%d %s.Add=%%d\", %s.Add(%s))", id, n, n, x)
		case 2:
			// A promoted method of a struct embedded by pointer.
			g.emit("e.Note(\"s%d %s.Label=%%q\", %s.Label(e))", id, n, n)
		case 3:
			// A promoted method of another package's struct.
			x := g.small()
			if g.awaitOK() {
				x = g.awaitExpr(1)
			}
			g.emit("%s.Put(%s)", n, x)
		case 4:
			// A promoted async method.
			if awaitInto(fmt.Sprintf("%s.FoldAsync(e, %s)", n, g.small())) {
				return
			}
			g.emit("e.Note(\"s%d %s.Sum=%%d\", %s.Sum())", id, n, n)
		case 5:
			// The receiver is copied (Report) or its pointer read (Label)
			// at the defer.
			if g.chance(0.5) {
				g.emit("defer %s.Report(e)", n)
			} else {
				g.emit("defer %s.Label(e)", n)
			}
			return
		case 6:
			x := g.small()
			if g.awaitOK() {
				x = g.awaitExpr(1)
			}
			g.emit("%s.Acc = %sNewAcc(%s)", n, g.q("lib"), x)
		case 7:
			g.emit("%s.Meta = &%sMeta{Tag: %s}", n, g.q("lib"), g.strExpr())
		case 8:
			g.emit("%s.Shape = %sSquare((%s) %% 10)", n, g.q("lib"), g.small())
		case 9:
			g.emit("e.Note(\"s%d %s.Area=%%d\", %s.Area())", id, n, n)
		default:
			if v.kind == kTally {
				g.emit("e.Note(\"s%d %s.Total=%%d\", %s.Total())", id, n, n)
				break
			}
			// Wrapped's own: Inner's promoted method, its field, the
			// embedded generic Cell's methods and async method.
			switch g.rng.IntN(5) {
			case 0:
				g.emit("e.Note(\"s%d %s.Bump=%%d\", %s.Bump())", id, n, n)
			case 1:
				x := g.small()
				if g.awaitOK() {
					x = g.awaitExpr(1)
				}
				g.emit("%s.Own = %s", n, x)
			case 2:
				g.emit("%s.Set(%s)", n, g.elemExpr(1))
			case 3:
				if awaitInto(fmt.Sprintf("%s.RefreshAsync(e, %s)", n, g.strExpr())) {
					return
				}
				g.emit("%s.K++", n)
			default:
				g.emit("%s.Cell = %sNewCell(%s)", n, g.q("lib"), g.strExpr())
			}
		}
	case kLabeled:
		switch g.rng.IntN(3) {
		case 0:
			g.emit("e.Note(\"s%d %s.Label=%%q\", %s.Label(e))", id, n, n)
		case 1:
			g.emit("switch %s.(type) {", n)
			g.emit("case %sTally:", g.q("lib"))
			g.emit("\te.Note(\"s%d Tally\")", id)
			g.emit("case *%sTally:", g.q("lib"))
			g.emit("\te.Note(\"s%d *Tally\")", id)
			if !g.inLib {
				g.emit("case Wrapped, *Wrapped:")
				g.emit("\te.Note(\"s%d Wrapped\")", id)
			}
			g.emit("}")
		default:
			g.emit("defer %s.Label(e)", n)
			return
		}
	case kCell:
		switch g.rng.IntN(3) {
		case 0:
			g.emit("%s.Set(%s)", n, g.elemExpr(v.elem))
		case 1:
			// The generic type's async method.
			if awaitInto(fmt.Sprintf("%s.RefreshAsync(e, %s)", n, elemTypes[v.elem].expr(g))) {
				return
			}
			fallthrough
		default:
			x := fmt.Sprintf("cv%d", id)
			g.emit("%s := %s.Get()", x, n)
			g.emit("e.Note(\"s%d %s=%%v\", %s)", g.id(), x, x)
		}
	case kPair:
		switch g.rng.IntN(4) {
		case 0:
			g.emit("%s.SetVal(%s)", n, g.elemExpr(v.elem))
		case 1:
			g.emit("%s.Val = %s", n, g.elemExpr(v.elem))
		case 2:
			g.emit("%s.Key = %s", n, elemTypes[v.key].expr(g))
		default:
			g.emit("%s = %sMakePair(%s.Key, %s)", n, g.q("lib"), n, elemTypes[v.elem].expr(g))
		}
	case kStack:
		if g.chance(0.6) {
			g.emit("%s.Push(%s)", n, g.elemExpr(v.elem))
		} else {
			x := fmt.Sprintf("pv%d", id)
			g.emit("if %s, ok := %s.Pop(); ok {", x, n)
			g.emit("\te.Note(\"s%d popped %%v\", %s)", id, x)
			g.emit("}")
		}
	case kABag:
		x := g.small()
		if g.awaitOK() {
			x = g.awaitExpr(1)
		}
		g.emit("%s.Put(%s)", n, x)
	case kBBag:
		g.emit("%s.Put(string(%s))", n, g.elemExpr(4))
	case kID:
		if g.chance(0.5) {
			g.emit("%s = %s.Next()", n, n)
		} else {
			g.emit("%s += %sID(%s)", n, g.q("au"), g.small())
		}
	case kName:
		if g.chance(0.5) {
			g.emit("%s = %s.Upper()", n, n)
		} else {
			g.emit("%s += %s", n, g.elemExpr(4))
		}
	case kTT, kHT:
		pk := map[kind]string{kTT: "tt", kHT: "ht"}[v.kind]
		if g.chance(0.5) {
			g.emit("%s = %sMust(%sNew(\"u%d\").Parse(%s))", n, g.q(pk), g.q(pk), id, tmplLits[g.rng.IntN(len(tmplLits))])
		} else if v.kind == kTT && g.chance(0.5) {
			g.emit("%s = %sMust(%s.Clone())", n, g.q(pk), n)
		}
	}
	g.note(v)
}
