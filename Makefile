# The two commands a new user needs (see README.md).
.PHONY: serve test build release bench fuzz web-assets

# `make fuzz FUZZ_SECONDS=300` runs every libFuzzer target that long (Docs/testing.md);
# FUZZ_TARGETS="vcard xml" picks some.
export FUZZ_SECONDS FUZZ_CONFIG FUZZ_RUNS

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

fuzz:
	bash scripts/fuzz.sh $(FUZZ_TARGETS)

# Regenerate Sources/RoloWeb/Rendering/Embedded.generated.swift from the templates, CSS and JS.
web-assets:
	swift build --build-tests
	ROLO_REGENERATE=1 swift test --skip-build --filter EmbeddedFilesTests/theGeneratedFileIsFresh
