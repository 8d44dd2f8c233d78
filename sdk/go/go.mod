module github.com/platformapi/platformapi/sdk/go

go 1.24
