module github.com/blitz-go/blitz

go 1.25.0

require (
	github.com/blitz-go/blitz/timerwheel v0.0.0
	github.com/magefile/mage v1.17.2
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

tool github.com/magefile/mage

replace github.com/blitz-go/blitz/timerwheel => ./timerwheel
