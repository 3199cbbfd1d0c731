FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npx next build apps/web
ENV NODE_ENV=production PORT=3000
EXPOSE 3000
CMD ["node", "node_modules/tsx/dist/cli.mjs", "apps/web/server/main.ts"]
