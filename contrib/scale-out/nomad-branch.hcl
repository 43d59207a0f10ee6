# SPDX-License-Identifier: MIT
# The branch step as a parameterized Nomad batch job:
#   nomad job dispatch -meta index=0 sbx-branch   (and 1, 2, ...)
# then dispatch the select step the same way once all are done.
job "sbx-branch" {
  type = "batch"
  parameterized {
    meta_required = ["index"]
  }
  group "branch" {
    task "branch" {
      driver = "raw_exec"   # sbx makes its own sandbox; it needs root on the client
      config {
        command = "/bin/sh"
        args = ["-c", "SLURM_ARRAY_JOB_ID=speculate-1 SLURM_ARRAY_TASK_ID=${NOMAD_META_index} exec /opt/sbx/contrib/scale-out/slurm-branch.sbatch"]
      }
      env {
        SBX_STORE        = "s3://snapshots/speculate"
        SBX_BASE         = "snap-1a2b3c4d"
        AWS_ENDPOINT_URL = "http://rgw.service.consul:7480"
      }
      template {
        data        = "AWS_ACCESS_KEY_ID={{ with nomadVar \"sbx/store\" }}{{ .key }}{{ end }}\nAWS_SECRET_ACCESS_KEY={{ with nomadVar \"sbx/store\" }}{{ .secret }}{{ end }}\n"
        destination = "secrets/store.env"
        env         = true
      }
    }
  }
}
