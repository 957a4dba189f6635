"""Memory layout and real views (strides, storage offsets, clone, reshape, random fills), as the
differential fuzzer found them differing from PyTorch (issue 14): each compares with PyTorch."""

from conftest import both


def test_writing_into_an_overlapping_as_strided_view_changes_every_element_sharing_the_place(
    torch,
):
    # the fuzzer's: row 1 of the view starts one place after row 0, so they share two places;
    # writing row 0 changes row 1 too, and the storage places nothing was written to keep theirs
    def written(lib):
        nan = float("nan")
        storage = lib.tensor([1.0, nan, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
        view = lib.as_strided(storage, (2, 3), (1, 1), 5)
        view[0] = -0.5
        other = lib.as_strided(storage, (2, 3), (1, 1), 0)
        other[1, 1:] = -0.0  # -0.0 over 0.0 or nan is a change too
        return view, storage, 1 / storage

    both(torch, written)
