from sweep.progress import count_jobs, job_label, set_total


def test_count_jobs_multiplies_sweep_overrides():
    assert count_jobs(["chunk.size=128,256,512", "chunk.overlap=0,64"]) == 6
    assert count_jobs(["chunk.size=256"]) == 1
    assert count_jobs(["chunk.size=range(100,400,100)", "eval.gain=linear"]) == 3
    assert count_jobs([]) == 1


def test_job_label():
    set_total(6)
    assert job_label(0) == "[1/6]"
    set_total(None)
    assert job_label(2) == "[3]"
