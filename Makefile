# The two commands a new user needs (see README.md).
.PHONY: serve test build release bench

serve:
	bash scripts/install-deps.sh
	swift build -c release --product rolo
	.build/release/rolo serve

test:
	bash scripts/test.sh

build:
	swift build

release:
	swift build -c release --product rolo
