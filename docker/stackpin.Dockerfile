# stackpin's own image: stackpin and stackpin-convtest on Debian 12, for CI jobs that check
# manifests, verify and stage archives, build .deb packages or lay out image build contexts.
#
#   docker build -f docker/stackpin.Dockerfile -t stackpin .
#   docker run --rm -v "$PWD:/work" -w /work stackpin check manifests/*.toml
#
# The build stage installs exactly what scripts/install-deps.sh installs on a developer machine
# (Debian's packages), so the image is built the way CI builds stackpin.
ARG DEBIAN_IMAGE=debian:bookworm

FROM ${DEBIAN_IMAGE} AS build
COPY . /src
RUN /src/scripts/install-deps.sh \
    && cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DSTACKPIN_BUILD_TESTS=OFF \
    && cmake --build /build -j"$(nproc)" \
    && cmake --install /build --prefix /opt/stackpin --strip

FROM ${DEBIAN_IMAGE}
# The runtime libraries behind the -dev packages of the build stage (ldd of the binary).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libarchive13 libssl3 libtomlplusplus3 libcurl4 libisal2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/stackpin/bin/ /usr/local/bin/
LABEL org.opencontainers.image.title="stackpin" \
      org.opencontainers.image.description="Reproducible CUDA/cuDNN stacks from one manifest"
ENTRYPOINT ["stackpin"]
CMD ["--help"]
