// Package lambdatest holds the tests that run the real function binaries:
// each functions/<group> main is built for the host exactly as it ships
// (-tags lambda.norpc, CGO_ENABLED=0), started under AWS's runtime
// interface emulator (shared/harness/lambdarie) as AWS's base images run it, fed the API Gateway events of events/apigw,
// and judged by the API Gateway responses it returns. It proves the Lambda
// edge end to end, which in-process handler tests cannot: the main's wiring,
// the Runtime API loop, the v2 payload adapter and the cold start.
package lambdatest
