# tollgate: the gateway and its embedded services as a container. Build: docker build -t tollgate .
FROM node:24-bookworm-slim AS build
# better-sqlite3 is a native addon: build it from source when no prebuilt binary is reachable.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production DATA_DIR=/data HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 9091
# /healthz on the admin listener (plain HTTP even when the public one is TLS), else on PORT (plain HTTP).
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "const ok=(p)=>fetch('http://127.0.0.1:'+p+'/healthz').then(r=>r.ok,()=>false);ok(process.env.ADMIN_PORT||9091).then(a=>a||ok(process.env.PORT||8080)).then(u=>process.exit(u?0:1))"
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["start", "--config", "config/gateway.yaml"]
