module github.com/kwire/kwire

go 1.26
