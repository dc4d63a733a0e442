# Build the fleetjob-hub binary.
#
# This build pulls golang and distroless images. Where no registry can be
# reached, `make hub-image` makes the same image offline: the same static
# binary (`make build`: CGO_ENABLED=0) packed FROM scratch by `docker import`, as
# /fleetjob-hub run by user 65532 (hack/kind/images.sh).
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Copy the module files and download the dependencies first, so this layer is
# cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download

# Copy the sources (.dockerignore keeps out binaries, local state and tools modules).
COPY . .

# CGO_ENABLED=0: a static binary for the distroless base image. VERSION
# (make docker-build VERSION=v0.1.0) is what --version reports.
ARG VERSION=
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w -X github.com/fleetjob/fleetjob/pkg/version.version=${VERSION}" \
    -o fleetjob-hub ./cmd/fleetjob-hub

# distroless/static has no shell and runs as a non-root user.
# See https://github.com/GoogleContainerTools/distroless
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/fleetjob-hub /fleetjob-hub
USER 65532:65532

ENTRYPOINT ["/fleetjob-hub"]
