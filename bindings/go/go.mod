module github.com/libcupel/libcupel/bindings/go

go 1.19
