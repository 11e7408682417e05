import pytest

from medkg.abbreviations import find_abbreviations


@pytest.mark.parametrize(("text", "expected"), [
    ("Treatment with valproic acid (VPA) raised ammonia. VPA was stopped.",
     {"VPA": "valproic acid"}),
    ("Patients with Parkinson's disease (PD) and heart failure (HF).",
     {"PD": "Parkinson's disease", "HF": "heart failure"}),
    ("Levels of dopamine (DA) fell.", {"DA": "dopamine"}),
    ("Isoproterenol (ISO) induced injury.", {"ISO": "Isoproterenol"}),
    ("The dose (mg) was given (n = 12).", {}),
])
def test_schwartz_hearst(text: str, expected: dict[str, str]) -> None:
    assert find_abbreviations(text) == expected
