module github.com/blitz-go/blitz/magefiles

go 1.25.0

require (
	github.com/magefile/mage v1.17.2
	golang.org/x/mod v0.40.0
	golang.org/x/tools v0.49.0
)

require golang.org/x/sync v0.22.0 // indirect

tool github.com/magefile/mage
