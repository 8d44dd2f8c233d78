# mk/rehearse.mk: the deploy rehearsal without AWS. The root
# Makefile includes it; `make test` runs `rehearse-synthesized` after it has
# synthesized the templates.
#
#   make rehearse   synth, then deploy the template's storage resources to the
#                   emulator's CloudFormation, run the local server with
#                   BACKEND=aws on exactly those resources and drive the
#                   README's first requests through it (infra/rehearse)

# Keep the root Makefile's default goal: an included file must not steal it.
rehearse_saved_goal := $(.DEFAULT_GOAL)

CDK_OUT ?= cdk.out

.PHONY: rehearse rehearse-synthesized

rehearse: synth
	$(MAKE) rehearse-synthesized

rehearse-synthesized:
	@python3 -c 'import boto3' 2>/dev/null || python3 -m pip install --quiet boto3
	.ci/with-moto python3 infra/rehearse/rehearse.py $(firstword $(wildcard $(CDK_OUT)/PlatformApi-*.template.json))

.DEFAULT_GOAL := $(rehearse_saved_goal)
