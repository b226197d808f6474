module github.com/blitz-go/blitz

go 1.25.0

require (
	github.com/magefile/mage v1.17.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)

tool github.com/magefile/mage
