// The parts of education/autograding-grading-reporter (MIT, (c) 2023 GitHub) that read a
// runner's result, at commit 1a54efbff2f95704e2f4cb91609e3b1690157cf3, restated so the
// test can run them under Node without the Actions toolkit:
//   src/main.js                 decode: Buffer.from(env, "base64").toString("utf-8") + JSON.parse;
//                               the job fails when status is "fail" or "error"
//   src/helpers/test-helpers.js max score = results.max_score || 0
//   src/notify-classroom.js     if max_score: sum tests[].score in order -> `Points ${sum}/${max}`
// Input: the environment variable <RUNNER>_RESULTS, RUNNER given as argv[2].
// Output (stdout): one JSON line {points, failed, errored, names}.
const runner = process.argv[2];
const encoded = process.env[`${runner.trim().toUpperCase()}_RESULTS`];
const json = Buffer.from(encoded, "base64").toString("utf-8");
const results = JSON.parse(json);

let totalPoints = 0;
let maxPoints = 0;
if (results.max_score) {
  maxPoints += results.max_score;
  results.tests.forEach(({ score }) => {
    totalPoints += score;
  });
}
const points = maxPoints ? `Points ${totalPoints}/${maxPoints}` : null;
console.log(JSON.stringify({
  points,
  failed: results.status === "fail",
  errored: results.status === "error",
  names: results.tests.map((t) => t.name),
}));
