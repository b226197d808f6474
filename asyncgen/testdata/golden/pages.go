package golden

import htmltmpl "html/template"

// page is an HTML template, for imports.go, whose file imports
// text/template under the same package name.
func page() *htmltmpl.Template {
	return htmltmpl.Must(htmltmpl.New("page").Parse("<b>{{.}}</b>"))
}
