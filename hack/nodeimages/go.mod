module skylift.dev/hack/nodeimages

go 1.26.0
