"""Deploy rehearsal without AWS: the storage part of the synthesized
CloudFormation template is deployed to the emulator's CloudFormation
(AWS_ENDPOINT_URL, started by .ci/with-moto), the local server runs with
BACKEND=aws against exactly the resources the stack created (names from the
stack, not defaults), and the README's first requests go through it. It
proves that what CDK creates is what the code expects: key schema, TTL
attribute, stream, queue redrive limits, the key and the secrets.

Usage: python3 infra/rehearse/rehearse.py cdk.out/PlatformApi-<stage>.template.json
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import boto3

STORAGE = {"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::SQS::Queue", "AWS::KMS::Key"}

# moto's CloudFormation cannot create secrets: they are made through the
# Secrets Manager API instead, as the template's GenerateSecretString says.
SECRET = "AWS::SecretsManager::Secret"


def storage_template(path):
    """The template's storage resources, as synthesized, less their tags
    (nothing reads them; moto's CloudFormation mishandles KMS key tags)."""
    full = json.load(open(path))
    keep, secrets = {}, {}
    for k, r in full["Resources"].items():
        r = dict(r, Properties={p: v for p, v in r.get("Properties", {}).items() if p != "Tags"})
        if r["Type"] in STORAGE:
            keep[k] = r
        elif r["Type"] == SECRET:
            secrets[k] = r
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": keep}, secrets


def make_secrets(sm, stack, secrets):
    """Creates each secret as CloudFormation would: a random string of the
    template's GenerateSecretString length and alphabet."""
    arns = {}
    for logical, r in secrets.items():
        gen = r["Properties"].get("GenerateSecretString", {})
        value = sm.get_random_password(
            PasswordLength=gen.get("PasswordLength", 32),
            ExcludePunctuation=gen.get("ExcludePunctuation", False),
            ExcludeCharacters=gen.get("ExcludeCharacters", ""),
        )["RandomPassword"]
        arns[logical] = sm.create_secret(Name=stack + "-" + logical, SecretString=value)["ARN"]
    return arns


def check(cond, what):
    if not cond:
        raise SystemExit("rehearsal: " + what)
    print("ok:", what)


def deploy(cfn, name, template):
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(template))
    for _ in range(120):
        status = cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        if status.endswith("COMPLETE") or status.endswith("FAILED"):
            break
        time.sleep(1)
    check(status == "CREATE_COMPLETE", "the storage stack deploys (%s)" % status)
    return {r["LogicalResourceId"]: r["PhysicalResourceId"]
            for r in cfn.list_stack_resources(StackName=name)["StackResourceSummaries"]}


def environment(resources, template, sqs, secret_arns):
    def logical(pattern, rtype):
        ids = [k for k, r in template["Resources"].items() if re.fullmatch(pattern, k) and r["Type"] == rtype]
        check(len(ids) == 1, "one %s %s in the template" % (rtype, pattern))
        return resources[ids[0]]

    def queue(name):  # the queue, not its dead-letter queue
        q = logical(name + "[0-9A-F]{8}", "AWS::SQS::Queue")
        return q if q.startswith("http") else sqs.get_queue_url(QueueName=q)["QueueUrl"]

    def secret(name):
        ids = [k for k in secret_arns if re.fullmatch(name + "[0-9A-F]{8}", k)]
        check(len(ids) == 1, "one secret %s in the template" % name)
        return secret_arns[ids[0]]

    return {
        "TABLE_NAME": logical("Table[0-9A-F]{8}", "AWS::DynamoDB::Table"),
        "FILES_BUCKET": logical("FilesBucket[0-9A-F]{8}", "AWS::S3::Bucket"),
        "ARCHIVES_BUCKET": logical("ArchivesBucket[0-9A-F]{8}", "AWS::S3::Bucket"),
        "ARTIFACTS_BUCKET": logical("ArtifactsBucket[0-9A-F]{8}", "AWS::S3::Bucket"),
        "WEBHOOK_QUEUE_URL": queue("WebhookQueue"),
        "RUNS_QUEUE_URL": queue("RunsQueue"),
        "DATABASES_QUEUE_URL": queue("DatabasesQueue"),
        "WALLETS_QUEUE_URL": queue("WalletsQueue"),
        "KMS_KEY_ID": logical("EnvelopeKey[0-9A-F]{8}", "AWS::KMS::Key"),
        "CREDIT_TOKEN_SECRET_ARN": secret("CreditTokenSeed"),
        "ARCHIVE_SIGNING_SECRET_ARN": secret("ArchiveSigningSeed"),
    }


def expectations(env, template, ddb, sqs):
    table = ddb.describe_table(TableName=env["TABLE_NAME"])["Table"]
    keys = {k["AttributeName"]: k["KeyType"] for k in table["KeySchema"]}
    check(keys == {"pk": "HASH", "sk": "RANGE"}, "the table's key schema is pk/sk")
    stream = table.get("StreamSpecification", {})
    check(stream.get("StreamEnabled") and stream.get("StreamViewType") == "NEW_IMAGE", "the table streams new images (audit rollup)")
    ttl = ddb.describe_time_to_live(TableName=env["TABLE_NAME"])["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        check(ttl.get("AttributeName") == "expiresAt", "the table expires items by expiresAt")
    else:
        # moto's CloudFormation does not apply TimeToLiveSpecification:
        # the template is checked instead (the code never depends on the
        # physical deletion, see shared/adapters/store).
        spec = [r for r in template["Resources"].values() if r["Type"] == "AWS::DynamoDB::Table"][0]["Properties"]["TimeToLiveSpecification"]
        check(spec == {"AttributeName": "expiresAt", "Enabled": True}, "the template expires items by expiresAt (the emulator does not apply TTL)")
    for name, receives in (("WEBHOOK_QUEUE_URL", 8), ("RUNS_QUEUE_URL", 3), ("DATABASES_QUEUE_URL", 3), ("WALLETS_QUEUE_URL", 10)):
        attrs = sqs.get_queue_attributes(QueueUrl=env[name], AttributeNames=["RedrivePolicy"])["Attributes"]
        policy = json.loads(attrs["RedrivePolicy"])
        check(int(policy["maxReceiveCount"]) == receives, "%s dead-letters after %d receives" % (name, receives))


def call(base, method, path, key=None, body=None, headers=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    if body is not None and not isinstance(body, bytes):
        req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Authorization", "Bearer " + key)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def first_requests(env):
    # A fresh data directory (the local chain keeps its blocks there), and
    # a process group of its own: `go run` does not pass a SIGTERM on to
    # the server it started, so the whole group is stopped.
    data = tempfile.mkdtemp(prefix="rehearse-data-")
    run_env = dict(os.environ, BACKEND="aws", ADDR="127.0.0.1:0", DATA_DIR=data, **env)
    server = subprocess.Popen(["go", "run", "./functions/local"], env=run_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        base = None
        for line in server.stdout:
            m = re.match(r"listening on (http://\S+)", line)
            if m:
                base = m.group(1)
                break
        check(base is not None, "the local server starts with BACKEND=aws on the stack's resources")
        token = subprocess.run(["go", "run", "./functions/local", "mint-credit-token", "--credits", "50"],
                               env=run_env, capture_output=True, text=True, check=True).stdout.strip()
        status, key = call(base, "POST", "/v1/api-keys", body={"label": "root"},
                           headers={"X-Service-Credit-Token": token, "Idempotency-Key": "rehearse-first-key"})
        check(status == 201 and key["secret"].startswith("psk_"), "a credit token redeems into a root key")
        root = key["secret"]
        status, bal = call(base, "GET", "/v1/credits/balance", key=root)
        check(status == 200 and bal["balance"] == 50, "the balance reads 50 credits")
        status, child = call(base, "POST", "/v1/api-keys", key=root, headers={"Idempotency-Key": "rehearse-child-1"},
                             body={"label": "search", "scopes": ["services:invoke"], "allowedOperations": ["services.invoke.cloud-superbrain.memory.search"],
                                   "limits": {"services.invoke": {"requestsPerMinute": 60}}})
        check(status == 201, "a narrower child key is created")
        status, inv = call(base, "POST", "/v1/services/cloud-superbrain/invoke", key=root, headers={"Idempotency-Key": "rehearse-invoke-1"},
                           body={"operationId": "memory.write", "input": {"text": "rehearsed"}})
        check(status == 200 and inv["chargedCredits"] == 0.01, "an invoke is charged exactly")
        status, _ = call(base, "POST", "/v1/files", key=root, body=b"hello from the rehearsal",
                         headers={"Idempotency-Key": "rehearse-file-1", "Content-Type": "text/plain", "X-File-Name": "hello.txt"})
        check(status == 201, "a file lands in the stack's files bucket")
        status, _ = call(base, "POST", "/v1/databases/account", key=root, body={}, headers={"Idempotency-Key": "rehearse-db-1"})
        check(status == 201, "a database is provisioned on the archives bucket and the table")
        status, q = call(base, "POST", "/v1/databases/query", key=root, body={"sql": "select 1 as one"})
        check(status == 200 and q["rows"] == [{"one": 1}], "the database answers a query")
        status, w = call(base, "POST", "/v1/wallets", key=root, body={"label": "rehearsal"}, headers={"Idempotency-Key": "rehearse-wallet-1"})
        check(status == 201 and w["address"].startswith("0x"), "a wallet's key is sealed by the stack's KMS key")
        status, b = call(base, "GET", "/v1/wallets/" + w["id"] + "/balances", key=root)
        check(status == 200 and b["data"][0]["amount"] == "0", "the wallet's balances read from the local chain")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


def main():
    template, secrets = storage_template(sys.argv[1])
    session = boto3.session.Session(region_name=os.environ.get("AWS_REGION", "us-east-1"))
    client = lambda s: session.client(s, endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    cfn, ddb, sqs, sm = client("cloudformation"), client("dynamodb"), client("sqs"), client("secretsmanager")
    name = "rehearse-%d" % int(time.time())
    resources = deploy(cfn, name, template)
    try:
        env = environment(resources, template, sqs, make_secrets(sm, name, secrets))
        expectations(env, template, ddb, sqs)
        first_requests(env)
    finally:
        cfn.delete_stack(StackName=name)
    print("rehearsal passed")


if __name__ == "__main__":
    main()
