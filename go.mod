module github.com/edged/edged

go 1.26
