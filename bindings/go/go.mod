module cupel

go 1.19
