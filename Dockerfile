# compaction-guard processor / simulator image.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# A larger young generation: fewer scavenges of per-record garbage (docs/operations.md, "Running against a cluster").
ENV NODE_OPTIONS=--max-semi-space-size=32
# glibc's malloc on transparent huge pages: first touching fresh memory is what makes kafkajs'
# copy of each fetch response slow (docs/operations.md, "Running against a cluster"; docs/decisions.md 29).
ENV GLIBC_TUNABLES=glibc.malloc.hugetlb=1
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY schemas ./schemas
# Inside a container the HTTP server must listen on all interfaces to be reachable through a
# published port or by Prometheus; beyond the loopback, /sessions needs a token (start-up refuses
# otherwise), so it is off unless the deployment turns it on with CG_HTTP_SESSIONS=true and
# CG_HTTP_SESSIONS_TOKEN(_FILE). /metrics, /healthz and /readyz need no token.
ENV CG_HTTP_HOST=0.0.0.0
ENV CG_HTTP_SESSIONS=false
# Where docker-compose.yml's init service leaves the generated secrets (a volume owned by node).
RUN mkdir /keys && chown node:node /keys
USER node
ENTRYPOINT ["node", "bin/compaction-guard.js"]
CMD ["run"]
