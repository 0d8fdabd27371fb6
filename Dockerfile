# The attnsel command line in a container: built from this checkout as a release is (the portable
# binary of scripts/release.sh), installed by scripts/install.sh after its SHA-256 is checked, on a
# slim Debian with nothing else added.
#
#   docker build -t attnsel .
#   docker run --rm attnsel --gpu sm90 --model deepseek-ai/DeepSeek-V3
#   docker run --rm -v "$PWD:/src:ro" attnsel check --gpu sm90,sm100 /src
FROM debian:bookworm-slim AS build
WORKDIR /attnsel
COPY . .
# release.sh installs the build dependencies (scripts/build-cli.sh's list) with apt-get as root.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates binutils dpkg-dev >/dev/null \
 && scripts/release.sh --build-dir /tmp/build --out /dist

FROM debian:bookworm-slim
COPY --from=build /dist /dist
COPY scripts/install.sh /usr/local/lib/attnsel/install.sh
RUN /usr/local/lib/attnsel/install.sh --from /dist --sha256sums /dist/SHA256SUMS --prefix /usr/local \
 && rm -rf /dist \
 && useradd --system --no-create-home --shell /usr/sbin/nologin attnsel
USER attnsel
WORKDIR /src
ENTRYPOINT ["attnsel"]
CMD ["--help"]
