// A webhook receiver on loopback that verifies each delivery with the
// Standard Webhooks library, as a user's receiver would. Run by
// TestStandardWebhooksLibraryVerifiesDeliveries (make standardwebhooks-test):
//
//   node receiver.mjs <secrets file>
//
// It prints "listening on http://127.0.0.1:<port>", then answers 204 when
// each secret of the file (one a line, read at every request) verifies the
// delivery, and 401 otherwise, with the library's reason on stderr.
import { readFileSync } from "node:fs";
import http from "node:http";
import { Webhook } from "standardwebhooks";

const secretsFile = process.argv[2];

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const secrets = readFileSync(secretsFile, "utf8").split("\n").filter(Boolean);
    try {
      if (secrets.length === 0) throw new Error("no secret to verify with");
      for (const secret of secrets) new Webhook(secret).verify(body, req.headers);
      res.writeHead(204).end();
    } catch (err) {
      console.error(`refused ${req.headers["webhook-id"]}: ${err.message}`);
      res.writeHead(401).end();
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
