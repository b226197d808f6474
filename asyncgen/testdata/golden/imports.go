package golden

import (
	"strings"
	"text/template"

	"github.com/blitz-go/blitz/future"
)

// Two packages named template: this file imports text/template, and the
// kept p is an html/template's, which the generated file must import under
// another name.
//
//blitz:async
func render(f future.Future[string]) string {
	t := template.Must(template.New("t").Parse("{{.}}"))
	p := page()
	s := future.Await(f)
	var b strings.Builder
	_ = t.Execute(&b, s)
	_ = p.Execute(&b, s)
	return b.String()
}
