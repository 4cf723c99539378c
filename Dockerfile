# syntax=docker/dockerfile:1
# Skylift operator image: Node 24 LTS, production dependencies only, non-root,
# runs with a read-only root filesystem, tini as PID 1 for signal handling.
# Build: docker build -t ghcr.io/skylift-dev/skylift:$(node -p 'require("./package.json").version') .

ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json \
 && npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM node:${NODE_VERSION}-bookworm-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="skylift" \
      org.opencontainers.image.description="Kubernetes operator for AWS load balancers, RDS databases and Route 53 records" \
      org.opencontainers.image.source="https://github.com/skylift-dev/skylift" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /src/package.json ./
COPY --from=build --chown=root:root /src/node_modules ./node_modules
COPY --from=build --chown=root:root /src/dist ./dist
# 65532: the conventional "nonroot" uid; the chart's securityContext uses the same.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]
CMD ["run"]
