module github.com/baton-locks/baton/bench/clients/go-pairs

go 1.19

require github.com/baton-locks/baton/clients/go v0.0.0

replace github.com/baton-locks/baton/clients/go => ../../../clients/go
