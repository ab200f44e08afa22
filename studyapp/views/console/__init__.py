"""The researcher console, one module per area. The page Streamlit runs is ``console.py``
(registered in ``studyapp/views/app.py``; its file name is its address, ``/console``)."""
