# compaction-guard processor / simulator image.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# A larger young generation: fewer scavenges of per-record garbage (README, "Running against a cluster").
ENV NODE_OPTIONS=--max-semi-space-size=32
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY schemas ./schemas
USER node
ENTRYPOINT ["node", "bin/compaction-guard.js"]
CMD ["run"]
