# One image recipe for every Relaygram app: docker build --build-arg APP=ingress .
# (APP: ingress | dispatcher | gateway | standalone)

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY . .
# Dependency install scripts stay off; the build step below is explicit.
RUN npm ci --ignore-scripts && NX_DAEMON=false npx nx run-many -t build

FROM node:22-bookworm-slim AS runtime
ARG APP=standalone
ENV NODE_ENV=production \
    APP=${APP} \
    RELAYGRAM_CONFIG=/app/config/relaygram.yaml
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/apps ./apps
COPY --from=build /app/libs ./libs
COPY --from=build /app/tools/bench/package.json ./tools/bench/package.json
COPY config ./config
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force \
    && find apps libs -path '*/src' -prune -exec rm -rf {} + \
    && find apps libs -name test -type d -prune -exec rm -rf {} +
USER node
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec node apps/${APP}/dist/main.js"]
