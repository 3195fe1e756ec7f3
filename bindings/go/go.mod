module zyfa.dev/zyfa

go 1.19
