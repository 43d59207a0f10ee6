/* SPDX-License-Identifier: MIT */
/* Unit tests for the parts of the S3 client that need no server: store URLs,
 * object keys and the XML of S3's answers. */
#include <stdlib.h>

#include "s3.h"
#include "url.h"
#include "tap.h"

static int
url_ok(const char *u)
{
	struct sbx_err e;

	return sbx_url_s3_check(u, &e) == 0;
}

int
main(void)
{
	static const char *const good[] = { "s3://bucket", "s3://bucket/", "s3://my-bucket.x/a/b",
		"s3://abc/team_1/ci.snapshots/", "s3://a-1/p", NULL };
	static const char *const bad[] = { "s3://", "s3://ab", "s3://Bucket/x", "s3://-bucket/x",
		"s3://bucket-/x", "s3://bu..cket/x", "s3://bucket//x", "s3://bucket/a/../b",
		"s3://bucket/./a", "s3://bucket/a b", "s3://bucket/a?b", "s3://bucket/a%2Fb",
		"file:///tmp/x", "S3://bucket/x", "s3://bucket_x/y", NULL };
	char out[64];
	size_t i;

	for (i = 0; good[i]; i++)
		ok(url_ok(good[i]), "valid store URL %s", good[i]);
	for (i = 0; bad[i]; i++)
		ok(!url_ok(bad[i]), "refused store URL %s", bad[i]);
	{
		char big[700] = "s3://bucket/";

		for (i = 12; i < sizeof big - 1; i++)
			big[i] = 'a';
		big[sizeof big - 1] = '\0';
		ok(!url_ok(big), "a prefix over 512 characters is refused");
	}

	ok(sbx_s3_xml_text("<Error><Code>SignatureDoesNotMatch</Code></Error>", "Code", out,
	    sizeof out) && strcmp(out, "SignatureDoesNotMatch") == 0, "an error code");
	ok(sbx_s3_xml_text("<a><ETag>&quot;9b2c&quot;</ETag></a>", "ETag", out, sizeof out) &&
	    strcmp(out, "\"9b2c\"") == 0, "entities decoded");
	ok(sbx_s3_xml_text("<K>a&amp;b&lt;c&gt;&apos;&bogus;</K>", "K", out, sizeof out) &&
	    strcmp(out, "a&b<c>'&bogus;") == 0, "every entity, and an unknown one kept");
	ok(!sbx_s3_xml_text("<Code>unterminated", "Code", out, sizeof out) && out[0] == '\0',
	    "an unterminated element is not there");
	ok(!sbx_s3_xml_text("<Other>x</Other>", "Code", out, sizeof out), "a missing element");
	ok(sbx_s3_xml_text("<Key>0123456789abcdef</Key>", "Key", out, 8) &&
	    strcmp(out, "0123456") == 0, "a long value is cut to the buffer");
	ok(sbx_s3_xml_text("<UploadId></UploadId>", "UploadId", out, sizeof out) && out[0] == '\0',
	    "an empty element");
	return done_testing();
}
